//! The build script of every twin package: compiles the twin's sources (the original crate's) with
//! `cfg(shuttle)`, so the sync facade hands out shuttle's primitives in this package only. A
//! `RUSTFLAGS="--cfg loom"` build already picks a mode for every crate; a twin then stays as the
//! flags say (choosing both is a compile error).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(shuttle)");
    println!("cargo::rerun-if-env-changed=CARGO_CFG_LOOM");
    if std::env::var_os("CARGO_CFG_LOOM").is_none()
        && std::env::var_os("CARGO_CFG_SHUTTLE").is_none()
    {
        println!("cargo::rustc-cfg=shuttle");
    }
}
