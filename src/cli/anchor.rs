//! `aeplens anchor`: anchoring chain heads with any RFC 3161 service (verification.md d.7).
//! `anchor PATH…` prints, for each chain path's head, the `openssl ts -query` that asks a
//! timestamp authority to stamp it; `anchor --add RESPONSE.tsr PATH…` verifies the
//! authority's answer and appends the anchor line to the anchor file.

use super::{KeyArgs, note};
use crate::canon::Sha256Digest;
use crate::model::text::{file_name, sanitize};
use crate::verify::anchors::{Anchor, AnchorStatus};
use crate::verify::tsa::{self, Stamped, TsaState};
use crate::verify::{Keyring, Options, Report, Trees};
use clap::Args;
use std::io::Write;

/// What `aeplens anchor --help` explains.
pub const ABOUT: &str = "Anchor chain heads with an RFC 3161 timestamp authority, so that a \
tail cut from a chain is caught later (check --anchors: F-TAIL-TRUNCATED) and a chain shows \
how far it is covered.\n\n\
`aeplens anchor PATH…` prints, for each chain path's head (its newest record), the \
`openssl ts -query` that writes a request for that record's hash H; send each request to \
any RFC 3161 service. Heads the anchor file (-o) already covers are skipped.\n\n\
`aeplens anchor --add RESPONSE.tsr --tsa-certs ROOTS.pem PATH…` verifies the service's \
answer offline (imprint, signature, the critical timeStamping usage, the chain to ROOTS) and \
appends one line to the anchor file: {record_sha256, authority, proof, chain_root, run_id} \
— chain_root, the hash of the chain's first record, is what lets a later check recognise the \
chain when its anchored head is gone. Evidence files are only read.\n\n\
Exit codes:\n\n0: printed, or the anchor appended (or already there).\n\n1: the response \
does not verify, or its record is not in the evidence given.\n\n2: usage error, unreadable \
evidence, response or anchor file, or -o naming an evidence file.";

/// Arguments of `anchor`.
#[derive(Args, Debug)]
pub struct AnchorArgs {
    #[command(flatten)]
    pub keys: KeyArgs,
    /// An RFC 3161 response (or bare token, DER) to verify and append to the anchor file.
    #[arg(long, value_name = "RESPONSE.tsr")]
    pub add: Option<String>,
    /// The anchor file: appended to by --add, read to skip heads already anchored.
    #[arg(
        short = 'o',
        long = "out",
        value_name = "FILE",
        default_value = "anchors.ndjson"
    )]
    pub out: String,
    /// Evidence files or directories (the chains whose heads to anchor; with --add, the
    /// evidence holding the stamped record, so the anchor names its chain).
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,
}

/// Runs `anchor`; returns the exit code.
pub fn run(args: &AnchorArgs) -> i32 {
    if super::report::refuses_output(&args.paths, &args.out) {
        return 2;
    }
    let mut keys = match args.keys.keyring() {
        Ok(keys) => keys,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    if args.add.is_none()
        && std::path::Path::new(&args.out).exists()
        && let Err(e) = keys.add_anchors(&args.out)
    {
        eprintln!("{}", e.render());
        return 2;
    }
    let report = (!args.paths.is_empty()).then(|| {
        let (inputs, report, _) = crate::verify::verify_paths(
            &args.paths,
            &keys,
            &Options::default(),
            None,
            Trees::OnDisk,
            &mut |_, _| {},
        );
        for e in inputs.iter().flat_map(|i| &i.errors) {
            note(&e.render());
        }
        report
    });
    match &args.add {
        Some(response) => add(response, &args.out, &keys, report.as_ref()),
        None => {
            if let Some(report) = report {
                queries(&report)
            } else {
                eprintln!(
                    "aeplens anchor: give the evidence whose chain heads to anchor, or --add RESPONSE.tsr"
                );
                2
            }
        }
    }
}

/// Prints the `openssl ts -query` of each chain path's head not yet anchored.
fn queries(report: &Report) -> i32 {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut seen = std::collections::HashSet::new();
    for path in &report.links.paths {
        let (Some(&head), Some(first), Some(last)) = (
            path.members.last(),
            path.records.first(),
            path.records.last(),
        ) else {
            continue;
        };
        let head = &report.records[head as usize];
        if !seen.insert(head.canonical_sha256) {
            continue;
        }
        let at = |r: &crate::verify::links::RecordAt| format!("{}#{}", file_name(&r.path), r.index);
        let run = sanitize(head.run_id.as_deref().unwrap_or("—"));
        let h = head.canonical_sha256;
        let _ = writeln!(
            out,
            "# run {run} · {} record{}, {} → {} · head {h}",
            path.records.len(),
            if path.records.len() == 1 { "" } else { "s" },
            at(first),
            at(last),
        );
        if path
            .anchored_through
            .as_ref()
            .is_some_and(|a| a.position + 1 == path.records.len())
        {
            out.push_str("#   already anchored\n");
            continue;
        }
        // An anchor already proves a longer chain than this head: stamping the shorter one
        // would read as if nothing had been cut.
        for cut in (report.anchors.iter())
            .filter(|a| a.status == AnchorStatus::Truncated && a.last_loaded.as_ref() == Some(last))
        {
            let warning = format!(
                "warning: {}:{} proves record {} further along this chain than its head here: its tail was cut, and anchoring this shorter head does not undo that",
                sanitize(&cut.file),
                cut.line,
                cut.record_sha256
            );
            note(&warning);
            let _ = writeln!(out, "#   {warning}");
        }
        let _ = writeln!(
            out,
            "openssl ts -query -digest {h} -sha256 -cert -out {}.tsq",
            &h.to_string()[..16]
        );
    }
    out.push_str(
        "# send each .tsq to an RFC 3161 service, e.g.\n\
         #   curl -sS -H 'Content-Type: application/timestamp-query' --data-binary @F.tsq \"$TSA_URL\" -o F.tsr\n\
         # then append each answer: aeplens anchor --add F.tsr --tsa-certs TSA-ROOT.pem -o anchors.ndjson PATH…\n",
    );
    super::report::emit(&out)
}

/// Verifies the response in `response` and appends its anchor line to `file`.
fn add(response: &str, file: &str, keys: &Keyring, report: Option<&Report>) -> i32 {
    let der = match std::fs::read(response) {
        Ok(der) => der,
        Err(e) => {
            eprintln!("aeplens anchor: cannot read {}: {e}", sanitize(response));
            return 2;
        }
    };
    let digest = match tsa::sha256_imprint(&der) {
        Ok(digest) => digest,
        Err(e) => {
            eprintln!("aeplens anchor: {}: {}", sanitize(response), sanitize(&e));
            return 1;
        }
    };
    let check = tsa::verify(&der, Stamped::Sha256(&digest), keys.tsa_roots());
    if check.state != TsaState::Verified {
        eprintln!(
            "aeplens anchor: {} is {}: {}{}",
            sanitize(response),
            check.state.name(),
            sanitize(&check.token.reason),
            if keys.tsa_roots().is_empty() {
                " (give the authority's root with --tsa-certs)"
            } else {
                ""
            }
        );
        return 1;
    }
    let record = Sha256Digest(digest);
    let mut line = serde_json::json!({
        "record_sha256": record.to_string(),
        "authority": check.token.tsa.clone().unwrap_or_default(),
        "proof": crate::verify::encoding::encode_base64(&der),
    });
    match report.map(|r| chain_of(r, &record)) {
        Some(Some((root, run))) => {
            line["chain_root"] = root.to_string().into();
            line["run_id"] = run.into();
        }
        Some(None) => {
            eprintln!(
                "aeplens anchor: record {record} (stamped in {}) is not in the evidence given",
                sanitize(response)
            );
            return 1;
        }
        None => note(
            "no evidence given: the anchor names no chain (a later check sees a cut tail only \
             while the anchored record is loaded); give the evidence to name it",
        ),
    }
    let existing = if std::path::Path::new(file).exists() {
        match crate::verify::anchors::read_file(file) {
            Ok(anchors) => anchors,
            Err(e) => {
                eprintln!("{}", e.render());
                return 2;
            }
        }
    } else {
        Vec::new()
    };
    if existing
        .iter()
        .any(|a: &Anchor| a.record_sha256 == record && a.token == der)
    {
        note(&format!("{} already holds this anchor", sanitize(file)));
        return 0;
    }
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .and_then(|mut f| writeln!(f, "{line}"));
    match appended {
        Ok(()) => {
            note(&format!(
                "anchored {record}: {} — appended to {}",
                sanitize(&check.token.proven()),
                sanitize(file)
            ));
            0
        }
        Err(e) => {
            eprintln!("aeplens anchor: cannot write {}: {e}", sanitize(file));
            2
        }
    }
}

/// The chain root (first record's `H`) and run of the path holding `record`.
fn chain_of(report: &Report, record: &Sha256Digest) -> Option<(Sha256Digest, String)> {
    let i = report
        .records
        .iter()
        .position(|r| r.canonical_sha256 == *record)?;
    let path = (report.links.paths.iter())
        .filter(|p| p.members.contains(&(i as u32)))
        .max_by_key(|p| p.members.len())?;
    let root = &report.records[*path.members.first()? as usize];
    let run = report.records[i].run_id.clone().unwrap_or_default();
    Some((root.canonical_sha256, run.to_string()))
}
