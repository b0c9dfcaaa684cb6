//! The `stapvm` command's library: everything but the command-line entry
//! point (main.rs), so that other crates' tests (tests/tests/) can drive the
//! output path on records from the C core without the product linking the
//! test kit.
//!
//! - `cli`: the command line (clap), stap's options and habits.
//! - `script`: script sources, `-D`, compilation.
//! - `kallsyms`, `resolve`: kernel symbols and wildcard expansion on the
//!   target; `debuginfo`: the DWARF source file of each function.
//! - `btf`, `targetvars`: target variables relocated from BTF.
//! - `device`: the ioctls of /dev/stapvm; `ring`: the mmap'd ring consumer.
//! - `output`: records to text, globals, summaries; `outfile`: `-o`, `-S`.
//! - `system`: the commands of system(), run with /bin/sh -c.
//! - `passlog`: stap's `-v` pass lines (`Pass 1: parsed user script ...`).
//! - `session`: the load/run loop; `target`: `-x`/`-c` and `target()`.
//! - `list`: `stapvm list [-L]`; `doctor`: `stapvm doctor`; `boot`:
//!   `stapvm boot` (boot-time tracing from the initramfs).
//! - `completions`: `stapvm completions SHELL`; `manmd`: Markdown to
//!   roff, `manpages`: the man pages (`stapvm debug man`).
pub mod absolute;
pub mod boot;
pub mod btf;
pub mod cli;
pub mod completions;
pub mod debuginfo;
pub mod device;
pub mod doctor;
pub mod dwarf2btf;
pub mod kallsyms;
pub mod list;
pub mod manmd;
pub mod manpages;
pub mod outfile;
pub mod output;
pub mod passlog;
pub mod pretty;
pub mod resolve;
pub mod ring;
pub mod script;
pub mod session;
pub mod statements;
pub mod system;
pub mod target;
pub mod targetvars;
#[cfg(test)]
mod testc;
pub mod tracepoints;
pub mod tzinfo;
pub mod ubinary;
pub mod ulibs;
pub mod uprobes;
pub mod ustack;
pub mod watch;
