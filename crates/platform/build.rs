// The migrations are embedded by `sqlx::migrate!`: rebuild when one is added
// or changed, not only when this crate's sources are.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
