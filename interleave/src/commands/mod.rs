//! One module per subcommand of `interleave`, named after it. Each reads its arguments, calls
//! the library beneath (`run_spec`, `engines`, `shrink`, `failure_folder`, `report`, ...) and
//! says what came out; none holds a function of more than 80 lines. `check` is
//! `models::cli`'s, `server` is `server::serve`'s.

pub mod admin;
pub mod chaos;
pub mod deploy;
pub mod gather;
pub mod mutants;
pub mod replay;
pub mod shrink;
