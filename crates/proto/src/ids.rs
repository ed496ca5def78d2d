//! Game and user ids: checked once, where a request brings them in, and
//! carried as their own types after that, so a handler cannot pass on an
//! id nobody looked at.

use std::fmt;

use tonic::Status;

/// The longest id a client may send; ours are 32 hex digits.
pub const MAX_ID_LEN: usize = 64;

/// Checks an id from the wire (a game, a user, a ticket): 1 to
/// [`MAX_ID_LEN`] letters, digits or `-`. INVALID_ARGUMENT names `field`.
///
/// # Errors
/// When the id is empty, too long or holds other characters.
pub fn check<'a>(value: &'a str, field: &str) -> Result<&'a str, Status> {
    if value.is_empty() {
        return Err(Status::invalid_argument(format!("{field} is empty")));
    }
    if value.len() > MAX_ID_LEN
        || !value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err(Status::invalid_argument(format!(
            "{field} {:?} is not an id",
            value.chars().take(80).collect::<String>()
        )));
    }
    Ok(value)
}

macro_rules! id {
    ($(#[$doc:meta])* $name:ident, $field:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// # Errors
            /// INVALID_ARGUMENT naming the field when `value` is not an id.
            pub fn parse(value: &str) -> Result<$name, Status> {
                check(value, $field).map(|id| $name(id.to_owned()))
            }

            /// [`Self::parse`] without a copy.
            ///
            /// # Errors
            /// INVALID_ARGUMENT naming the field when `value` is not an id.
            pub fn from_wire(value: String) -> Result<$name, Status> {
                check(&value, $field)?;
                Ok($name(value))
            }

            #[must_use]
            pub fn as_str(&self) -> &str {
                &self.0
            }

            #[must_use]
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        /// An id reads as the text it is, wherever text is wanted.
        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

    };
}

id!(
    /// A game's id, checked.
    GameId,
    "game_id"
);

id!(
    /// A player's account id, checked.
    UserId,
    "user_id"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_letters_digits_and_dashes_up_to_its_length() {
        let id = GameId::parse("0f3a-B9").expect("an id");
        assert_eq!(id.as_str(), "0f3a-B9");
        assert_eq!(id.to_string(), "0f3a-B9");
        assert!(GameId::parse(&"a".repeat(MAX_ID_LEN)).is_ok());
        for (bad, says) in [
            ("", "game_id is empty"),
            ("a b", "game_id \"a b\" is not an id"),
            ("é", "is not an id"),
            (&"a".repeat(MAX_ID_LEN + 1), "is not an id"),
        ] {
            let status = GameId::parse(bad).expect_err(bad);
            assert_eq!(status.code(), tonic::Code::InvalidArgument);
            assert!(status.message().contains(says), "{}", status.message());
        }
        let status = UserId::from_wire("../x".to_owned()).expect_err("a path");
        assert!(
            status.message().starts_with("user_id "),
            "{}",
            status.message()
        );
    }
}
