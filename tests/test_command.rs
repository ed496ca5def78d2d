//! The README's test command, `./test`: its dry run names exactly what is
//! missing on the machine it runs on, and installs and runs nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// What `./test --dry-run` says it would install, one item per word after
/// each "would install …:" line, with `path` as PATH.
fn would_install(path: &str) -> BTreeSet<String> {
    let out = Command::new("bash")
        .arg(repo().join("test"))
        .arg("--dry-run")
        .env("PATH", path)
        .output()
        .expect("./test runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "./test --dry-run failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut items = BTreeSet::new();
    for line in text.lines() {
        if line == "nothing to install" {
            continue;
        }
        let (head, rest) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("a line of the dry run that names nothing: {line:?}"));
        assert!(
            head.starts_with("would install"),
            "unexpected line {line:?}"
        );
        items.extend(rest.split_whitespace().map(str::to_owned));
    }
    items
}

/// A folder of links to every program on `path` except `hidden`.
fn path_without(path: &str, hidden: &str, folder: &Path) {
    std::fs::create_dir_all(folder).expect("a folder for the links");
    for dir in std::env::split_paths(path) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let link = folder.join(&name);
            if name == hidden || link.exists() {
                continue;
            }
            // A name that cannot be linked (a race with a package manager,
            // say) only leaves that program out.
            let _ = std::os::unix::fs::symlink(entry.path(), link);
        }
    }
}

#[test]
fn the_dry_run_names_a_hidden_redis_server_and_nothing_else_new() {
    let path = std::env::var("PATH").expect("PATH is set");
    let before = would_install(&path);

    let folder: PathBuf =
        std::env::temp_dir().join(format!("ttakji-path-without-redis-{}", std::process::id()));
    path_without(&path, "redis-server", &folder);
    let hidden = folder.to_string_lossy().into_owned();
    let after = would_install(&hidden);
    let _ = std::fs::remove_dir_all(&folder);

    assert!(
        after.contains("redis-server"),
        "with redis-server off the PATH the dry run must name it: {after:?}"
    );
    let mut expected = before.clone();
    expected.insert("redis-server".to_owned());
    assert_eq!(
        after, expected,
        "hiding redis-server must add it and nothing else to what is missing"
    );
}

#[test]
fn a_bad_argument_is_refused_before_anything_is_installed_or_run() {
    let out = Command::new("bash")
        .arg(repo().join("test"))
        .arg("--frobnicate")
        .output()
        .expect("./test runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown argument '--frobnicate'"), "{err}");
}
