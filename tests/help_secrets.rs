//! `--help` names the environment variables a service reads but never
//! prints their values: database and Redis URLs carry passwords, and
//! keys are secrets.

use std::process::Command;

const SECRET: &str = "s3cr3t-in-the-environment";

#[test]
fn no_subcommand_s_help_prints_a_secret_from_the_environment() {
    for sub in ["serve", "gateway", "authority", "matchmaker", "ratings"] {
        let out = Command::new(env!("CARGO_BIN_EXE_ttakji"))
            .args([sub, "--help"])
            .env(
                "TTAKJI_DATABASE_URL",
                format!("postgres://ttakji:{SECRET}@db/ttakji"),
            )
            .env("TTAKJI_REDIS_URL", format!("redis://:{SECRET}@redis:6379"))
            .env("TTAKJI_TOKEN_KEYS", format!("k1={SECRET}"))
            .env("TTAKJI_SERVICE_KEY", SECRET)
            .output()
            .expect("ttakji runs");
        assert!(out.status.success(), "{sub} --help: {out:?}");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("TTAKJI_"),
            "{sub} --help names its environment: {help}"
        );
        assert!(
            !help.contains(SECRET),
            "{sub} --help prints a secret:\n{help}"
        );
    }
}
