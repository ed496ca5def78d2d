//! Refusals that say why in a form a program reads: every status other than
//! OK that a public call answers with carries a `google.rpc.ErrorInfo` in
//! its details, its `reason` a stable UPPER_SNAKE_CASE word from the list in
//! `docs/errors.md` and its `domain` [`DOMAIN`], beside the English message.
//! Apps show a refusal in the player's language by its reason (and the
//! values in its metadata, such as `point`), without parsing the English.
//!
//! Where a refusal is made, it names its own reason ([`refused`]); the
//! gateway gives any that leaves without one the reason of its code
//! ([`with_code_reason`]), so no refusal leaves without a reason.

use std::time::Duration;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt as _};

/// Metadata on a refusal worth retrying (UNAVAILABLE, RESOURCE_EXHAUSTED):
/// how many milliseconds to wait before trying again.
pub const RETRY_AFTER_HEADER: &str = "ttakji-retry-after-ms";

/// The `domain` of every reason this service gives.
pub const DOMAIN: &str = "ttakji.app";

/// A refusal with `code`, the machine-readable `reason` and the English
/// `message`.
#[must_use]
pub fn refused(code: Code, reason: &str, message: impl Into<String>) -> Status {
    refused_with(code, reason, message, [])
}

/// [`refused`] with values for the reason's message (`point` → `E5`).
#[must_use]
pub fn refused_with<'a>(
    code: Code,
    reason: &str,
    message: impl Into<String>,
    metadata: impl IntoIterator<Item = (&'a str, String)>,
) -> Status {
    let metadata: std::collections::HashMap<String, String> = metadata
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    Status::with_error_details(
        code,
        message,
        ErrorDetails::with_error_info(reason, DOMAIN, metadata),
    )
}

/// `status`, keeping its code, message and metadata (a retry hint, say),
/// with `reason` in its details.
#[must_use]
pub fn with_reason(status: Status, reason: &str) -> Status {
    let metadata = status.metadata().clone();
    Status::with_error_details_and_metadata(
        status.code(),
        status.message(),
        ErrorDetails::with_error_info(reason, DOMAIN, std::collections::HashMap::new()),
        metadata,
    )
}

/// The reason `status` carries, if any.
#[must_use]
pub fn reason(status: &Status) -> Option<String> {
    status.get_details_error_info().map(|info| info.reason)
}

/// `status` as it is if it carries a reason, else with its code's reason
/// ([`code_reason`]).
#[must_use]
pub fn with_code_reason(status: Status) -> Status {
    if reason(&status).is_some() {
        return status;
    }
    let reason = code_reason(status.code());
    with_reason(status, reason)
}

/// The reason of a refusal that names none of its own: its code's name
/// ([`code_name`]), which says at least what kind of mistake
/// it was.
#[must_use]
pub fn code_reason(code: Code) -> &'static str {
    code_name(code)
}

/// The gRPC name of a status code, as dashboards show it.
#[must_use]
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// UNAVAILABLE with a retry hint.
#[must_use]
pub fn unavailable(message: impl Into<String>, retry_after: Duration) -> Status {
    with_retry_hint(Status::unavailable(message), retry_after)
}

/// RESOURCE_EXHAUSTED with `reason` (`docs/errors.md`) and a retry hint.
#[must_use]
pub fn resource_exhausted(
    reason: &str,
    message: impl Into<String>,
    retry_after: Duration,
) -> Status {
    with_retry_hint(
        refused(tonic::Code::ResourceExhausted, reason, message),
        retry_after,
    )
}

/// `status` with the milliseconds to wait before trying again in
/// [`RETRY_AFTER_HEADER`].
fn with_retry_hint(mut status: Status, retry_after: Duration) -> Status {
    if let Ok(value) = retry_after.as_millis().to_string().parse() {
        status.metadata_mut().insert(RETRY_AFTER_HEADER, value);
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_travels_in_the_details_beside_the_message_and_metadata() {
        let status = refused_with(
            Code::FailedPrecondition,
            "ILLEGAL_MOVE_OCCUPIED",
            "E5 is occupied",
            [("point", "E5".to_owned())],
        );
        let info = status.get_details_error_info().expect("an ErrorInfo");
        assert_eq!(info.reason, "ILLEGAL_MOVE_OCCUPIED");
        assert_eq!(info.domain, DOMAIN);
        assert_eq!(info.metadata.get("point").map(String::as_str), Some("E5"));
        assert_eq!(status.message(), "E5 is occupied");

        let mut busy = Status::resource_exhausted("slow down");
        busy.metadata_mut()
            .insert("ttakji-retry-after-ms", "250".parse().expect("ascii"));
        let busy = with_reason(busy, "RATE_LIMITED");
        assert_eq!(reason(&busy).as_deref(), Some("RATE_LIMITED"));
        assert_eq!(busy.message(), "slow down");
        assert!(
            busy.metadata().get("ttakji-retry-after-ms").is_some(),
            "the hint stays"
        );
    }

    #[test]
    fn a_refusal_without_a_reason_gets_its_codes_and_one_with_keeps_its_own() {
        let plain = with_code_reason(Status::not_found("no such game"));
        assert_eq!(reason(&plain).as_deref(), Some("NOT_FOUND"));
        let own = with_code_reason(refused(Code::NotFound, "GAME_NOT_FOUND", "no such game"));
        assert_eq!(reason(&own).as_deref(), Some("GAME_NOT_FOUND"));
    }
}
