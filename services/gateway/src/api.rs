//! The public API's methods as the contracts declare them: the layers ask
//! here whether a path names a real method (so a made-up path never becomes
//! a metric label) and whether that method may be called without a token.

use std::collections::HashMap;
use std::sync::LazyLock;

use prost::Message as _;

/// The methods a caller may use without a token: signing in is how a
/// player gets one. Every other method of the public API needs one.
pub const OPEN: [&str; 2] = [
    "/ttakji.v1.AuthService/SignInGuest",
    "/ttakji.v1.AuthService/SignInGoogle",
];

/// Every service's method names, by the service's full name
/// (`ttakji.v1.GameService`), read once from the compiled contracts.
static METHODS: LazyLock<HashMap<String, Vec<String>>> = LazyLock::new(|| {
    let set = match prost_types::FileDescriptorSet::decode(ttakji_proto::FILE_DESCRIPTOR_SET) {
        Ok(set) => set,
        Err(e) => {
            // Compiled into the binary, so this cannot happen; were it to,
            // every method would look unknown and the handlers (which
            // require a verified caller) would still refuse to serve.
            tracing::error!(error = %e, "the compiled contracts cannot be read");
            return HashMap::new();
        }
    };
    let mut methods = HashMap::new();
    for file in set.file {
        let package = file.package.unwrap_or_default();
        for service in file.service {
            let name = format!("{package}.{}", service.name.unwrap_or_default());
            let names = service.method.into_iter().filter_map(|m| m.name).collect();
            methods.insert(name, names);
        }
    }
    methods
});

/// The name of the method `path` (`/ttakji.v1.GameService/PlayMove`) calls
/// on `service` (`ttakji.v1.GameService`), if the contracts declare it.
#[must_use]
pub fn method(service: &str, path: &str) -> Option<&'static str> {
    let name = path
        .strip_prefix('/')?
        .strip_prefix(service)?
        .strip_prefix('/')?;
    METHODS
        .get(service)?
        .iter()
        .find(|known| *known == name)
        .map(String::as_str)
}

/// Whether the method at `path` may be called without a token.
#[must_use]
pub fn is_open(path: &str) -> bool {
    OPEN.contains(&path)
}

#[cfg(test)]
mod tests {
    use super::{OPEN, method};

    #[test]
    fn methods_of_the_public_api_are_known_by_their_path() {
        assert_eq!(
            method("ttakji.v1.GameService", "/ttakji.v1.GameService/PlayMove"),
            Some("PlayMove")
        );
        assert_eq!(
            method(
                "ttakji.v1.MatchService",
                "/ttakji.v1.MatchService/FindMatch"
            ),
            Some("FindMatch")
        );
    }

    #[test]
    fn a_made_up_path_names_no_method() {
        for path in [
            "/ttakji.v1.GameService/DropTables",
            "/ttakji.v1.GameService/",
            "/ttakji.v1.GameService",
            "/ttakji.v1.AuthService/PlayMove",
            "ttakji.v1.GameService/PlayMove",
            "",
        ] {
            assert_eq!(method("ttakji.v1.GameService", path), None, "{path:?}");
        }
    }

    #[test]
    fn the_open_methods_are_the_sign_ins_of_the_public_api() {
        for path in OPEN {
            assert!(
                method("ttakji.v1.AuthService", path).is_some(),
                "{path} is not a method of the AuthService"
            );
        }
        assert!(!super::is_open("/ttakji.v1.AuthService/ChangeNickname"));
        assert!(!super::is_open("/ttakji.v1.GameService/PlayMove"));
    }
}
