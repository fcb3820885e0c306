//! A TSA signer's certificate path to a trusted root, validated as RFC 5280 §6 says at
//! `genTime` by rustls' `webpki`, with the few checks it does not make.

use super::{Certificate, Oid, Roots, Window, common_name, valid_at};
use der::{Decode, Encode};

/// The timeStamping purpose's OID, as DER content bytes (1.3.6.1.5.5.7.3.8).
const TIME_STAMPING_DER: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x08];

/// RFC 5280 §6 path validation of `signer`, through the certificates its token carries, to
/// one of `roots`, at `gen_ms`: rustls' `webpki` builds and validates the path (every
/// signature, every issuer a CA, path length, name constraints, every certificate valid
/// at that time, `timeStamping` in every extended key usage on it). Kept here are only
/// the checks it does not make: an issuer's key usage, when present, allows `keyCertSign`,
/// and the root itself was valid then (the signer's critical `timeStamping` usage is
/// `usage_ok`'s, checked before). `Ok(Some(span))`: the path validates, and holds
/// over `span`; `Ok(None)`: it reaches none of the roots; `Err`: it fails.
pub(super) fn path_to_root(
    signer: &Certificate,
    certs: &[&Certificate],
    roots: &Roots,
    gen_ms: i64,
) -> Result<Option<Window>, String> {
    use rustls_pki_types::{CertificateDer, UnixTime};
    let der = |c: &Certificate| c.to_der().map_err(|e| e.to_string());
    let signer_der = CertificateDer::from(der(signer)?);
    let carried = (certs.iter().filter(|c| **c != signer))
        .map(|c| der(c).map(CertificateDer::from))
        .collect::<Result<Vec<_>, _>>()?;
    let end_entity = webpki::EndEntityCert::try_from(&signer_der)
        .map_err(|e| format!("the signer's certificate cannot be validated: {e}"))?;
    let at = UnixTime::since_unix_epoch(std::time::Duration::from_millis(
        u64::try_from(gen_ms).unwrap_or(0),
    ));
    let path = match end_entity.verify_for_usage(
        webpki::ALL_VERIFICATION_ALGS,
        &roots.anchors,
        &carried,
        at,
        // Every certificate on the path that states usages must allow timeStamping (the
        // signer's own, critical and alone, is `usage_ok`'s).
        webpki::KeyUsage::required_if_present(TIME_STAMPING_DER),
        None,
        None,
    ) {
        Ok(path) => path,
        Err(webpki::Error::UnknownIssuer) => return Ok(None),
        Err(e) => return Err(path_failure(&e, signer, certs, gen_ms)),
    };
    let mut on_path = vec![signer.clone()];
    for issuer in path.intermediate_certificates() {
        let cert = Certificate::from_der(issuer.der().as_ref()).map_err(|e| e.to_string())?;
        may_sign_certificates(&cert)?;
        on_path.push(cert);
    }
    let anchor = path.anchor();
    let root = (roots.certs.iter().zip(&roots.anchors))
        .find(|(_, a)| a.subject_public_key_info == anchor.subject_public_key_info)
        .map(|(c, _)| c)
        .ok_or("the path ends at a root that was not given")?;
    may_sign_certificates(root)?;
    valid_at(root, "the root", gen_ms)?;
    on_path.push(root.clone());
    let ms = |t: &x509_cert::time::Time| t.to_unix_duration().as_millis() as i64;
    let validity = on_path.iter().map(|c| &c.tbs_certificate.validity);
    Ok(Some(
        validity.fold((i64::MIN, i64::MAX), |(from, to), v| {
            (from.max(ms(&v.not_before)), to.min(ms(&v.not_after)))
        }),
    ))
}

/// An issuer's key usage, when it states one, allows signing certificates (RFC 5280
/// §4.2.1.3: `keyCertSign`).
fn may_sign_certificates(issuer: &Certificate) -> Result<(), String> {
    use x509_cert::ext::pkix::{KeyUsage, KeyUsages};
    const KEY_USAGE: Oid = Oid::new_unwrap("2.5.29.15");
    let Some(ext) =
        (issuer.tbs_certificate.extensions.iter().flatten()).find(|e| e.extn_id == KEY_USAGE)
    else {
        return Ok(());
    };
    let usage = KeyUsage::from_der(ext.extn_value.as_bytes())
        .map_err(|e| format!("the key usage of {}: {e}", common_name(issuer)))?;
    if usage.0.contains(KeyUsages::KeyCertSign) {
        Ok(())
    } else {
        Err(format!(
            "{} issued a certificate on the path, but its key usage does not allow keyCertSign",
            common_name(issuer)
        ))
    }
}

/// Why path validation failed, in a sentence: webpki's error, with the certificate it
/// concerns named where the token's certificates tell which.
fn path_failure(
    error: &webpki::Error,
    signer: &Certificate,
    certs: &[&Certificate],
    gen_ms: i64,
) -> String {
    use webpki::Error as E;
    let carried = || certs.iter().copied().filter(|c| *c != signer);
    let out_of_date = || {
        carried()
            .find(|c| valid_at(c, "", gen_ms).is_err())
            .map_or("a certificate on the path".to_string(), common_name)
    };
    let why = match error {
        E::CertExpired { .. } => format!("{} had expired at genTime", out_of_date()),
        E::CertNotValidYet { .. } => format!("{} was not yet valid at genTime", out_of_date()),
        E::EndEntityUsedAsCa => {
            let issuer = carried()
                .find(|c| c.tbs_certificate.subject == signer.tbs_certificate.issuer)
                .map_or("an issuer on the path".to_string(), common_name);
            format!("{issuer} issued a certificate but is not a CA (basicConstraints)")
        }
        E::CaUsedAsEndEntity => "the signer's certificate is a CA certificate".into(),
        E::PathLenConstraintViolated => "a CA's path length constraint is exceeded".into(),
        E::RequiredEkuNotFoundContext(_) => {
            "a certificate on the path does not allow timeStamping".into()
        }
        E::InvalidSignatureForPublicKey => {
            "a certificate on the path does not verify under its issuer's key".into()
        }
        other => format!("{other}"),
    };
    format!("the signer's certificate path does not validate at genTime: {why}")
}
