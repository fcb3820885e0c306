//! What a review produces, kept apart from the evidence: marks and notes on actions,
//! records and findings ([`marks`]), the review file that holds them with the last
//! session ([`mod@file`]), and the incident report ([`report`]) in every format.

pub mod file;
pub mod marks;
pub mod report;
