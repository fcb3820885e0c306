//! RFC 3161 time-stamp tokens (verification.md d.6), verified offline: the token's
//! imprint against the stamped bytes, its CMS signature under the signer certificate it
//! carries, that certificate's critical `timeStamping` usage, and its path to a trusted
//! root validated at `genTime` as RFC 5280 §6 says (rustls' `webpki`, in `path_to_root`).
//! Parsed with the RustCrypto `cms`, `x509-cert` and `x509-tsp` crates; signatures checked
//! with `ring`, `rsa`, `p256`, `p384` and `ed25519-dalek`. The timestamp axis
//! ([`super::timestamp`]) calls it for a record's proof that is DER, and the anchors
//! ([`super::anchors`]) for each anchor.

use cms::cert::CertificateChoices;
use cms::content_info::ContentInfo;
use cms::signed_data::{SignedData, SignerIdentifier, SignerInfo};
use der::asn1::{ObjectIdentifier as Oid, OctetString};
use der::{Decode, Encode};
use serde::{Deserialize, Serialize};
use sha2_10::Digest;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use x509_cert::Certificate;
use x509_tsp::{Accuracy, MessageImprint, TimeStampResp};

/// What a token is worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TsaState {
    /// Signed by a certificate chaining to a trusted root, for these bytes: the time is
    /// proven.
    Verified,
    /// Well-formed and self-consistent, but no trusted root reached: never proven.
    Untrusted,
    /// A good token for other bytes (moved from another record, or the record edited).
    ImprintMismatch,
    /// Its signature or a certificate check fails.
    Invalid,
    /// Decodes, but is not a time-stamp token.
    Malformed,
}

impl TsaState {
    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            TsaState::Verified => "tsa-verified",
            TsaState::Untrusted => "tsa-untrusted",
            TsaState::ImprintMismatch => "tsa-imprint-mismatch",
            TsaState::Invalid => "tsa-invalid",
            TsaState::Malformed => "tsa-malformed",
        }
    }
}

/// A token's verdict, and what it says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TsaCheck {
    pub state: TsaState,
    pub token: Token,
}

/// What a token says, as far as it could be read, and why it is worth what it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Token {
    /// The signer certificate's subject common name (else its whole subject).
    pub tsa: Option<String>,
    /// `genTime`, milliseconds since the epoch.
    pub gen_time_ms: Option<i64>,
    /// The accuracy, milliseconds.
    pub accuracy_ms: Option<u64>,
    /// Why, in a sentence.
    pub reason: String,
}

impl Token {
    /// `proven by TSA at genTime (±accuracy)` — to be said only of a `tsa-verified`
    /// token.
    pub fn proven(&self) -> String {
        let at = (self.gen_time_ms).map_or("an unreadable time".into(), |ms| {
            crate::model::time::format_ms(ms as f64)
        });
        let accuracy = (self.accuracy_ms).map_or(String::new(), |a| format!(" (±{a} ms)"));
        format!(
            "proven by {} at {at}{accuracy}",
            self.tsa.as_deref().unwrap_or("an unnamed TSA")
        )
    }
}

const SIGNED_DATA: Oid = Oid::new_unwrap("1.2.840.113549.1.7.2");
const TST_INFO: Oid = Oid::new_unwrap("1.2.840.113549.1.9.16.1.4");
const CONTENT_TYPE: Oid = Oid::new_unwrap("1.2.840.113549.1.9.3");
const MESSAGE_DIGEST: Oid = Oid::new_unwrap("1.2.840.113549.1.9.4");
const SHA256: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.2.1");
const SHA384: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.2.2");
const SHA512: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.2.3");
const RSA: Oid = Oid::new_unwrap("1.2.840.113549.1.1.1");
const RSA_SHA256: Oid = Oid::new_unwrap("1.2.840.113549.1.1.11");
const RSA_SHA384: Oid = Oid::new_unwrap("1.2.840.113549.1.1.12");
const RSA_SHA512: Oid = Oid::new_unwrap("1.2.840.113549.1.1.13");
const ECDSA_SHA256: Oid = Oid::new_unwrap("1.2.840.10045.4.3.2");
const ECDSA_SHA384: Oid = Oid::new_unwrap("1.2.840.10045.4.3.3");
const ECDSA_SHA512: Oid = Oid::new_unwrap("1.2.840.10045.4.3.4");
const EC_PUBLIC_KEY: Oid = Oid::new_unwrap("1.2.840.10045.2.1");
const P256: Oid = Oid::new_unwrap("1.2.840.10045.3.1.7");
const P384: Oid = Oid::new_unwrap("1.3.132.0.34");
const ED25519: Oid = Oid::new_unwrap("1.3.101.112");
const EXT_KEY_USAGE: Oid = Oid::new_unwrap("2.5.29.37");
const TIME_STAMPING: Oid = Oid::new_unwrap("1.3.6.1.5.5.7.3.8");
const COMMON_NAME: Oid = Oid::new_unwrap("2.5.4.3");

mod path;
use path::path_to_root;

/// The roots a token's signer must chain to, and the paths already validated against them
/// (a store's tokens come from a few TSA certificates: each path is validated once for the
/// span of time it holds over).
#[derive(Debug, Default)]
pub struct Roots {
    certs: Vec<Certificate>,
    /// The same roots as trust anchors for path validation.
    anchors: Vec<rustls_pki_types::TrustAnchor<'static>>,
    /// A signer certificate and the certificates its token carries → when the path
    /// found from them to a root holds.
    checked: std::sync::Mutex<Vec<CheckedPath>>,
}

/// A signer certificate followed by the certificates its token carries, and the span of
/// time over which every certificate on the path validated from them is valid.
type CheckedPath = (Vec<Certificate>, Window);

/// Milliseconds since the epoch, from and to (inclusive).
type Window = (i64, i64);

impl Clone for Roots {
    fn clone(&self) -> Roots {
        Roots {
            certs: self.certs.clone(),
            anchors: self.anchors.clone(),
            checked: std::sync::Mutex::default(),
        }
    }
}

impl Roots {
    /// True when no root is given.
    pub fn is_empty(&self) -> bool {
        self.certs.is_empty()
    }

    /// The roots.
    pub fn certs(&self) -> &[Certificate] {
        &self.certs
    }

    /// Adds the roots of `other`.
    pub fn extend(&mut self, other: Roots) {
        self.certs.extend(other.certs);
        self.anchors.extend(other.anchors);
        self.checked = std::sync::Mutex::default();
    }

    /// [`path_to_root`] at `gen_ms`, remembered per signer and carried certificates
    /// (compared whole; at most [`REMEMBERED`] of them) with the span its path holds over:
    /// the same path validates at any time inside it, since validity is the only thing
    /// path validation reads the time for.
    fn path(
        &self,
        signer: &Certificate,
        certs: &[&Certificate],
        gen_ms: i64,
    ) -> Result<bool, String> {
        let same = |(kept, (from, to)): &CheckedPath| {
            (*from..=*to).contains(&gen_ms)
                && kept.len() == certs.len() + 1
                && kept[0] == *signer
                && kept[1..].iter().zip(certs).all(|(a, b)| a == *b)
        };
        if (self.checked.lock().ok()).is_some_and(|c| c.iter().any(same)) {
            return Ok(true);
        }
        let Some(window) = path_to_root(signer, certs, self, gen_ms)? else {
            return Ok(false);
        };
        if let Ok(mut checked) = self.checked.lock()
            && checked.len() < REMEMBERED
        {
            let kept = std::iter::once(signer).chain(certs.iter().copied());
            checked.push((kept.cloned().collect(), window));
        }
        Ok(true)
    }
}

/// How many validated paths [`Roots`] remembers (a store's tokens come from a few TSAs;
/// hostile evidence may carry any number).
const REMEMBERED: usize = 64;

/// The certificates of a PEM bundle (`--tsa-certs`): the roots a token must chain to, each
/// a trust anchor of RFC 5280 path validation (a TSA's own certificate given here anchors
/// nothing: give the CA that issued it). Each `CERTIFICATE` block is decoded alone
/// (x509-cert's own chain loader panics on a file with none).
pub fn roots_from_pem(pem: &[u8]) -> Result<Roots, String> {
    use der::DecodePem;
    const END: &str = "-----END CERTIFICATE-----";
    let text = std::str::from_utf8(pem).map_err(|_| "not PEM: the file is not text")?;
    let (mut roots, mut anchors) = (Vec::new(), Vec::new());
    for (i, block) in text
        .split("-----BEGIN CERTIFICATE-----")
        .skip(1)
        .enumerate()
    {
        let end = block
            .find(END)
            .ok_or_else(|| format!("certificate {} has no END line", i + 1))?;
        let pem = format!("-----BEGIN CERTIFICATE-----{}{END}\n", &block[..end]);
        let cert = Certificate::from_pem(pem.as_bytes())
            .map_err(|e| format!("certificate {}: {e}", i + 1))?;
        let der = cert
            .to_der()
            .map_err(|e| format!("certificate {}: {e}", i + 1))?;
        let der = rustls_pki_types::CertificateDer::from(der);
        let anchor = webpki::anchor_from_trusted_cert(&der)
            .map_err(|e| format!("certificate {}: not usable as a trust anchor: {e}", i + 1))?
            .to_owned();
        roots.push(cert);
        anchors.push(anchor);
    }
    if roots.is_empty() {
        return Err("no PEM certificate in the file".into());
    }
    Ok(Roots {
        certs: roots,
        anchors,
        ..Roots::default()
    })
}

/// What a token must stamp.
#[derive(Clone, Copy, Debug)]
pub enum Stamped<'a> {
    /// These bytes (a record's `B`): the imprint is their digest under the algorithm it
    /// names (SHA-256, -384 or -512).
    Bytes(&'a [u8]),
    /// This SHA-256 digest itself (an anchor's `record_sha256`).
    Sha256(&'a [u8; 32]),
}

/// How many tokens [`verify`] checked in this process (what `check --timings` reports).
pub static TOKENS_VERIFIED: AtomicU64 = AtomicU64::new(0);
/// The CPU time [`verify`] took, nanoseconds summed over every core.
pub static TOKEN_NANOS: AtomicU64 = AtomicU64::new(0);

/// The token in `der` (a `TimeStampResp` or a bare `TimeStampToken`), verified as a stamp
/// of `stamped` under `roots`.
pub fn verify(der: &[u8], stamped: Stamped<'_>, roots: &Roots) -> TsaCheck {
    let start = std::time::Instant::now();
    let check = check_token(der, stamped, roots);
    TOKENS_VERIFIED.fetch_add(1, Relaxed);
    TOKEN_NANOS.fetch_add(start.elapsed().as_nanos() as u64, Relaxed);
    check
}

fn check_token(der: &[u8], stamped: Stamped<'_>, roots: &Roots) -> TsaCheck {
    let mut check = TsaCheck {
        state: TsaState::Malformed,
        token: Token::default(),
    };
    let parsed = match parse(der) {
        Ok(parsed) => parsed,
        Err(why) => {
            check.token.reason = why;
            return check;
        }
    };
    let Parsed {
        signed,
        tst,
        econtent,
    } = parsed;
    check.token.gen_time_ms = Some(tst.gen_time.ms);
    check.token.accuracy_ms = tst.accuracy.as_ref().map(|a| {
        a.seconds.unwrap_or(0) * 1000
            + u64::try_from(a.millis.unwrap_or(0)).unwrap_or(0)
            + u64::try_from(a.micros.unwrap_or(0)).unwrap_or(0) / 1000
    });
    let certs: Vec<&Certificate> = (signed.certificates.iter())
        .flat_map(|set| set.0.iter())
        .filter_map(|c| match c {
            CertificateChoices::Certificate(c) => Some(c),
            CertificateChoices::Other(_) => None,
        })
        .collect();
    let Some(info) = signed.signer_infos.0.iter().next() else {
        check.state = TsaState::Invalid;
        check.token.reason = "the token has no signer".into();
        return check;
    };
    let Some(signer) = (certs.iter().copied())
        .chain(roots.certs.iter())
        .find(|c| identifies(&info.sid, c))
    else {
        check.state = TsaState::Invalid;
        check.token.reason = "the token carries no certificate for its signer".into();
        return check;
    };
    check.token.tsa = Some(common_name(signer));
    let checked = signature_ok(info, signer, &econtent)
        .and_then(|()| usage_ok(signer))
        .and_then(|()| valid_at(signer, "the signer's", check.token.gen_time_ms.unwrap_or(0)));
    if let Err(why) = checked {
        check.state = TsaState::Invalid;
        check.token.reason = why;
        return check;
    }
    match imprint_ok(&tst, stamped) {
        Ok(()) => {}
        Err(why) => {
            check.state = TsaState::ImprintMismatch;
            check.token.reason = why;
            return check;
        }
    }
    let gen_ms = check.token.gen_time_ms.unwrap_or(0);
    let path = if roots.is_empty() {
        Ok(false)
    } else {
        roots.path(signer, &certs, gen_ms)
    };
    match path {
        Ok(true) => {
            check.state = TsaState::Verified;
            check.token.reason = format!(
                "signed by {}, which chains to a trusted root",
                check.token.tsa.as_deref().unwrap_or("")
            );
        }
        Ok(false) => {
            check.state = TsaState::Untrusted;
            check.token.reason = if roots.is_empty() {
                "no TSA root given (--tsa-certs): the token is not trusted".into()
            } else {
                "the signer's certificate chain reaches none of the given roots".into()
            };
        }
        Err(why) => {
            check.state = TsaState::Invalid;
            check.token.reason = why;
        }
    }
    check
}

/// True when `der` is a DER `TimeStampResp` (granted or not).
pub fn is_response(der: &[u8]) -> bool {
    TimeStampResp::from_der(der).is_ok()
}

/// The SHA-256 digest a token stamps (its imprint), when `der` is a token and its imprint
/// is SHA-256: what an anchor names as its `record_sha256`.
pub fn sha256_imprint(der: &[u8]) -> Result<[u8; 32], String> {
    let imprint = parse(der)?.tst.message_imprint;
    if imprint.hash_algorithm.oid != SHA256 {
        return Err(format!(
            "the token's imprint is {}, not SHA-256",
            imprint.hash_algorithm.oid
        ));
    }
    (imprint.hashed_message.as_bytes().try_into())
        .map_err(|_| "the token's SHA-256 imprint is not 32 bytes".to_string())
}

/// TSTInfo (RFC 3161 §2.4.2) as x509-tsp declares it, but with `genTime` read by
/// [`GenTime`]: RFC 3161 allows fractional seconds there, which der's `GeneralizedTime`
/// refuses (so a good token from a TSA that writes milliseconds would read as malformed).
#[derive(der::Sequence)]
struct TstInfo {
    version: der::asn1::Int,
    policy: Oid,
    message_imprint: MessageImprint,
    serial_number: der::asn1::Int,
    gen_time: GenTime,
    #[asn1(optional = "true")]
    accuracy: Option<Accuracy>,
    #[asn1(default = "Default::default")]
    ordering: bool,
    #[asn1(optional = "true")]
    nonce: Option<der::asn1::Int>,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT", optional = "true")]
    tsa: Option<x509_cert::ext::pkix::name::GeneralName>,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    extensions: Option<x509_cert::ext::Extensions>,
}

/// A GeneralizedTime in DER's form, `YYYYMMDDhhmmss[.f…]Z`, fractional seconds allowed
/// (RFC 3161 §2.4.2): its text as encoded, and the time in milliseconds (a fraction
/// beyond milliseconds is cut).
struct GenTime {
    text: Vec<u8>,
    ms: i64,
}

impl der::FixedTag for GenTime {
    const TAG: der::Tag = der::Tag::GeneralizedTime;
}

impl<'a> der::DecodeValue<'a> for GenTime {
    fn decode_value<R: der::Reader<'a>>(reader: &mut R, header: der::Header) -> der::Result<Self> {
        let text = reader.read_vec(header.length)?;
        let ms = gen_time_ms(&text).ok_or_else(|| der::Tag::GeneralizedTime.value_error())?;
        Ok(GenTime { text, ms })
    }
}

impl der::EncodeValue for GenTime {
    fn value_len(&self) -> der::Result<der::Length> {
        der::Length::try_from(self.text.len())
    }
    fn encode_value(&self, writer: &mut impl der::Writer) -> der::Result<()> {
        writer.write(&self.text)
    }
}

/// Milliseconds since the epoch of `YYYYMMDDhhmmss[.f…]Z` (DER: UTC, no trailing zero in
/// the fraction, which is not checked here).
fn gen_time_ms(text: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(text).ok()?.strip_suffix('Z')?;
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.len() != 14 || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) || text.ends_with('.') {
        return None;
    }
    let iso = format!(
        "{}-{}-{}T{}:{}:{}.{:0<3}Z",
        &whole[..4],
        &whole[4..6],
        &whole[6..8],
        &whole[8..10],
        &whole[10..12],
        &whole[12..14],
        fraction.get(..3).unwrap_or(fraction)
    );
    crate::model::time::parse_iso8601_ms(&iso).map(|ms| ms as i64)
}

struct Parsed {
    signed: SignedData,
    tst: TstInfo,
    /// The encapsulated TSTInfo's bytes, as signed.
    econtent: Vec<u8>,
}

fn parse(der: &[u8]) -> Result<Parsed, String> {
    let token = match TimeStampResp::from_der(der) {
        Ok(resp) => {
            let status = resp.status.status as u8;
            if status > 1 {
                let why = (resp.status.status_string.as_ref())
                    .and_then(|texts| texts.iter().next())
                    .map(|text| format!(": {}", crate::model::text::sanitize(text.as_str())))
                    .unwrap_or_default();
                return Err(format!(
                    "the response is a refusal (PKIStatus {status}{}), not a token{why}",
                    if status == 2 { " rejection" } else { "" }
                ));
            }
            resp.time_stamp_token.ok_or("a response without a token")?
        }
        Err(_) => ContentInfo::from_der(der)
            .map_err(|e| format!("neither a TimeStampResp nor a TimeStampToken: {e}"))?,
    };
    if token.content_type != SIGNED_DATA {
        return Err(format!(
            "the token's content is {}, not SignedData",
            token.content_type
        ));
    }
    let inner = token.content.to_der().map_err(|e| e.to_string())?;
    let signed = SignedData::from_der(&inner).map_err(|e| format!("SignedData: {e}"))?;
    let encap = &signed.encap_content_info;
    if encap.econtent_type != TST_INFO {
        return Err(format!(
            "the signed content is {}, not TSTInfo",
            encap.econtent_type
        ));
    }
    let econtent = encap
        .econtent
        .as_ref()
        .ok_or("the token holds no TSTInfo")?
        .decode_as::<OctetString>()
        .map_err(|e| format!("eContent: {e}"))?
        .into_bytes();
    let tst = TstInfo::from_der(&econtent).map_err(|e| format!("TSTInfo: {e}"))?;
    Ok(Parsed {
        signed,
        tst,
        econtent,
    })
}

/// The digest named by `oid` of `data`; `None` for another algorithm.
fn digest(oid: &Oid, data: &[u8]) -> Option<Vec<u8>> {
    Some(match *oid {
        SHA256 => crate::model::sha256::Sha256Digest::of(data).0.to_vec(),
        SHA384 => sha2_10::Sha384::digest(data).to_vec(),
        SHA512 => sha2_10::Sha512::digest(data).to_vec(),
        _ => return None,
    })
}

fn imprint_ok(tst: &TstInfo, stamped: Stamped<'_>) -> Result<(), String> {
    let imprint = &tst.message_imprint;
    let oid = &imprint.hash_algorithm.oid;
    let (want, what) = match stamped {
        Stamped::Bytes(bytes) => (
            digest(oid, bytes)
                .ok_or_else(|| format!("imprint hash {oid} is not SHA-256/384/512"))?,
            "the digest of this record's signed bytes",
        ),
        Stamped::Sha256(_) if *oid != SHA256 => {
            return Err(format!("imprint hash {oid} is not SHA-256"));
        }
        Stamped::Sha256(digest) => (digest.to_vec(), "the anchored record's hash"),
    };
    if imprint.hashed_message.as_bytes() == want.as_slice() {
        Ok(())
    } else {
        Err(format!("the token's imprint is not {what}"))
    }
}

fn identifies(sid: &SignerIdentifier, cert: &Certificate) -> bool {
    match sid {
        SignerIdentifier::IssuerAndSerialNumber(i) => {
            cert.tbs_certificate.issuer == i.issuer
                && cert.tbs_certificate.serial_number == i.serial_number
        }
        SignerIdentifier::SubjectKeyIdentifier(ski) => {
            (cert.tbs_certificate.extensions.iter().flatten()).any(|e| {
                e.extn_id == Oid::new_unwrap("2.5.29.14")
                    && OctetString::from_der(e.extn_value.as_bytes())
                        .is_ok_and(|v| v.as_bytes() == ski.0.as_bytes())
            })
        }
    }
}

fn common_name(cert: &Certificate) -> String {
    let subject = &cert.tbs_certificate.subject;
    (subject.0.iter().flat_map(|rdn| rdn.0.iter()))
        .find(|a| a.oid == COMMON_NAME)
        .and_then(|a| {
            der::asn1::Utf8StringRef::try_from(&a.value)
                .map(|s| s.as_str().to_string())
                .ok()
                .or_else(|| {
                    der::asn1::PrintableStringRef::try_from(&a.value)
                        .map(|s| s.as_str().to_string())
                        .ok()
                })
        })
        .unwrap_or_else(|| subject.to_string())
}

/// The signed attributes hold the TSTInfo content type and its digest, and the signature
/// over them verifies under the signer's key.
fn signature_ok(info: &SignerInfo, signer: &Certificate, econtent: &[u8]) -> Result<(), String> {
    let attrs = info
        .signed_attrs
        .as_ref()
        .ok_or("the signer has no signed attributes")?;
    let value = |oid: Oid| {
        (attrs.iter())
            .find(|a| a.oid == oid)
            .and_then(|a| a.values.iter().next())
    };
    let content_type = value(CONTENT_TYPE).and_then(|v| v.decode_as::<Oid>().ok());
    if content_type != Some(TST_INFO) {
        return Err("the signed content-type attribute is not TSTInfo".into());
    }
    let md = value(MESSAGE_DIGEST)
        .and_then(|v| v.decode_as::<OctetString>().ok())
        .ok_or("no message-digest attribute")?;
    let want = digest(&info.digest_alg.oid, econtent).ok_or_else(|| {
        format!(
            "digest algorithm {} is not SHA-256/384/512",
            info.digest_alg.oid
        )
    })?;
    if md.as_bytes() != want.as_slice() {
        return Err("the message-digest attribute is not the TSTInfo's digest".into());
    }
    let signed = attrs.to_der().map_err(|e| e.to_string())?;
    let alg = &info.signature_algorithm.oid;
    verify_signature(
        signer,
        alg,
        Some(&info.digest_alg.oid),
        &signed,
        info.signature.as_bytes(),
    )
    .map_err(|why| format!("the token's signature does not verify: {why}"))
}

/// `sig` over `msg` under `key`'s public key, by algorithm `alg` (`hash` names the digest
/// when `alg` does not: CMS's plain rsaEncryption).
fn verify_signature(
    key: &Certificate,
    alg: &Oid,
    hash: Option<&Oid>,
    msg: &[u8],
    sig: &[u8],
) -> Result<(), String> {
    match ring_algorithm(key, alg, hash) {
        Some(algorithm) => {
            let spki = &key.tbs_certificate.subject_public_key_info;
            let public = spki.subject_public_key.raw_bytes();
            (ring::signature::UnparsedPublicKey::new(algorithm, public).verify(msg, sig))
                .map_err(|_| "the signature does not verify".to_string())
        }
        None => verify_signature_rustcrypto(key, alg, hash, msg, sig),
    }
}

/// The `ring` algorithm for a signature `alg` (with digest `hash` for a bare
/// rsaEncryption) under `key`, when ring supports it: RSA PKCS#1 v1.5 with SHA-256/384/512
/// and a 2048–8192-bit key, ECDSA P-256/P-384 with SHA-256/384.
fn ring_algorithm(
    key: &Certificate,
    alg: &Oid,
    hash: Option<&Oid>,
) -> Option<&'static dyn ring::signature::VerificationAlgorithm> {
    use ring::signature as s;
    let spki = &key.tbs_certificate.subject_public_key_info;
    let digest = match *alg {
        RSA => *hash?,
        other => other,
    };
    Some(match (spki.algorithm.oid, digest) {
        (RSA, RSA_SHA256 | SHA256) => &s::RSA_PKCS1_2048_8192_SHA256,
        (RSA, RSA_SHA384 | SHA384) => &s::RSA_PKCS1_2048_8192_SHA384,
        (RSA, RSA_SHA512 | SHA512) => &s::RSA_PKCS1_2048_8192_SHA512,
        (EC_PUBLIC_KEY, ECDSA_SHA256 | ECDSA_SHA384) => {
            let curve = (spki.algorithm.parameters.as_ref())?
                .decode_as::<Oid>()
                .ok()?;
            match (curve, digest) {
                (P256, ECDSA_SHA256) => &s::ECDSA_P256_SHA256_ASN1,
                (P256, _) => &s::ECDSA_P256_SHA384_ASN1,
                (P384, ECDSA_SHA256) => &s::ECDSA_P384_SHA256_ASN1,
                (P384, _) => &s::ECDSA_P384_SHA384_ASN1,
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// [`verify_signature`] with the pure-Rust crates, for what `ring` does not support.
fn verify_signature_rustcrypto(
    key: &Certificate,
    alg: &Oid,
    hash: Option<&Oid>,
    msg: &[u8],
    sig: &[u8],
) -> Result<(), String> {
    use ::signature::Verifier;
    use ::signature::hazmat::PrehashVerifier;
    let spki = &key.tbs_certificate.subject_public_key_info;
    let named = match *alg {
        RSA_SHA256 | ECDSA_SHA256 => SHA256,
        RSA_SHA384 | ECDSA_SHA384 => SHA384,
        RSA_SHA512 | ECDSA_SHA512 => SHA512,
        RSA => *hash.ok_or("rsaEncryption without a digest algorithm")?,
        ED25519 => ED25519,
        other => return Err(format!("signature algorithm {other} is not supported")),
    };
    let bad = |e: ::signature::Error| format!("{e}");
    match *alg {
        RSA | RSA_SHA256 | RSA_SHA384 | RSA_SHA512 => {
            use rsa::pkcs8::DecodePublicKey;
            let der = spki.to_der().map_err(|e| e.to_string())?;
            let public = rsa::RsaPublicKey::from_public_key_der(&der)
                .map_err(|e| format!("RSA key: {e}"))?;
            let sig = rsa::pkcs1v15::Signature::try_from(sig).map_err(bad)?;
            match named {
                SHA256 => {
                    rsa::pkcs1v15::VerifyingKey::<sha2_10::Sha256>::new(public).verify(msg, &sig)
                }
                SHA384 => {
                    rsa::pkcs1v15::VerifyingKey::<sha2_10::Sha384>::new(public).verify(msg, &sig)
                }
                SHA512 => {
                    rsa::pkcs1v15::VerifyingKey::<sha2_10::Sha512>::new(public).verify(msg, &sig)
                }
                other => return Err(format!("digest {other} is not supported")),
            }
            .map_err(bad)
        }
        ECDSA_SHA256 | ECDSA_SHA384 | ECDSA_SHA512 => {
            if spki.algorithm.oid != EC_PUBLIC_KEY {
                return Err("an ECDSA signature under a key that is not an EC key".into());
            }
            let curve = (spki.algorithm.parameters.as_ref())
                .and_then(|p| p.decode_as::<Oid>().ok())
                .ok_or("an EC key without its curve")?;
            let prehash = digest(&named, msg).ok_or("unsupported digest")?;
            let point = spki.subject_public_key.raw_bytes();
            match curve {
                P256 => {
                    let vk = p256::ecdsa::VerifyingKey::from_sec1_bytes(point).map_err(bad)?;
                    let sig = p256::ecdsa::Signature::from_der(sig).map_err(bad)?;
                    vk.verify_prehash(&prehash, &sig).map_err(bad)
                }
                P384 => {
                    let vk = p384::ecdsa::VerifyingKey::from_sec1_bytes(point).map_err(bad)?;
                    let sig = p384::ecdsa::Signature::from_der(sig).map_err(bad)?;
                    vk.verify_prehash(&prehash, &sig).map_err(bad)
                }
                other => Err(format!("curve {other} is not supported (P-256, P-384)")),
            }
        }
        ED25519 => {
            let bytes: [u8; 32] = (spki.subject_public_key.raw_bytes().try_into())
                .map_err(|_| "an Ed25519 key that is not 32 bytes")?;
            let vk = ed25519_dalek::VerifyingKey::from_bytes(&bytes).map_err(bad)?;
            let sig = ed25519_dalek::Signature::from_slice(sig).map_err(bad)?;
            vk.verify_strict(msg, &sig).map_err(bad)
        }
        other => Err(format!("signature algorithm {other} is not supported")),
    }
}

/// The signer's certificate has the critical extended key usage `timeStamping`, alone
/// (RFC 3161 §2.3).
fn usage_ok(cert: &Certificate) -> Result<(), String> {
    let eku = (cert.tbs_certificate.extensions.iter().flatten())
        .find(|e| e.extn_id == EXT_KEY_USAGE)
        .ok_or("the signer's certificate has no extended key usage (timeStamping is required)")?;
    if !eku.critical {
        return Err("the signer's timeStamping key usage is not critical".into());
    }
    let usages = x509_cert::ext::pkix::ExtendedKeyUsage::from_der(eku.extn_value.as_bytes())
        .map_err(|e| format!("extended key usage: {e}"))?;
    if usages.0 != [TIME_STAMPING] {
        return Err("the signer's certificate is not for timeStamping alone".into());
    }
    Ok(())
}

/// `cert` (`whose`: "the signer's", "the root") was valid at `gen_ms`.
fn valid_at(cert: &Certificate, whose: &str, gen_ms: i64) -> Result<(), String> {
    let v = &cert.tbs_certificate.validity;
    let ms = |t: &x509_cert::time::Time| t.to_unix_duration().as_millis() as i64;
    if gen_ms < ms(&v.not_before) || gen_ms > ms(&v.not_after) {
        return Err(format!(
            "{whose} certificate was not valid at genTime (valid {} to {})",
            v.not_before, v.not_after
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::gen_time_ms;

    /// genTime with and without fractional seconds (RFC 3161 allows both), and text that
    /// is no GeneralizedTime.
    #[test]
    fn gen_time_reads_fractional_seconds() {
        assert_eq!(gen_time_ms(b"20261204010740Z"), Some(1_796_346_460_000));
        assert_eq!(gen_time_ms(b"20261204010740.5Z"), Some(1_796_346_460_500));
        assert_eq!(
            gen_time_ms(b"20261204010740.123456Z"),
            Some(1_796_346_460_123)
        );
        for bad in [
            &b"20261204010740"[..],
            b"20261204010740.Z",
            b"2026120401074Z",
            b"20261204010740.1aZ",
            b"\xff",
        ] {
            assert_eq!(gen_time_ms(bad), None, "{bad:?}");
        }
    }
}
