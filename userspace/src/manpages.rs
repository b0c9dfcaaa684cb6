//! The man pages (`stapvm debug man DIR [--page NAME.SECTION=FILE ...]`):
//! stapvm(1) and one page per visible subcommand (`stapvm-compile.1`, ...)
//! rendered by clap_mangen from the clap `Command` the CLI parses with, so
//! that they list exactly the options that exist; stapvm(1) gets the
//! sections clap knows nothing of (stap's command lines, exit status,
//! files, see also), written in Markdown here and converted by `manmd`,
//! which also turns documentation files into pages of their own
//! (`stapvm-language.7` from docs/language.md).
use crate::manmd;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why the pages could not be written.
#[derive(Debug, Error)]
pub enum Error {
    /// A Markdown page could not be read.
    #[error("cannot read {path}: {err}")]
    Read {
        /// The path.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
    /// A page (or the directory) could not be written.
    #[error("cannot write {path}: {err}")]
    Write {
        /// The path.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
    /// Two pages would have the same file name.
    #[error("two pages named {0}")]
    Duplicate(String),
}

/// A Markdown file to make a page of: `NAME.SECTION=FILE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageSpec {
    /// The page's name (`stapvm-language`).
    pub name: String,
    /// Its section (`7`; a digit, then letters: `3p`).
    pub section: String,
    /// The Markdown file.
    pub file: PathBuf,
}

impl PageSpec {
    /// The page's file name, `NAME.SECTION`.
    pub fn file_name(&self) -> String {
        format!("{}.{}", self.name, self.section)
    }
}

/// Parses `--page NAME.SECTION=FILE` (clap's value parser).
pub fn parse_page(s: &str) -> Result<PageSpec, String> {
    let bad = || {
        format!(
            "'{s}': expected NAME.SECTION=MARKDOWN_FILE, e.g. stapvm-language.7=docs/language.md"
        )
    };
    let (page, file) = s.split_once('=').ok_or_else(bad)?;
    let (name, section) = page.rsplit_once('.').ok_or_else(bad)?;
    let name_ok = !name.is_empty()
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'));
    let section_ok = section.chars().next().is_some_and(|c| c.is_ascii_digit())
        && section.chars().all(|c| c.is_ascii_alphanumeric());
    if !name_ok || !section_ok || file.is_empty() {
        return Err(bad());
    }
    Ok(PageSpec {
        name: name.to_string(),
        section: section.to_string(),
        file: PathBuf::from(file),
    })
}

/// The manual every page belongs to (`.TH`'s fifth field).
pub const MANUAL: &str = "stapvm Manual";

/// The page's `.TH` source field: `stapvm VERSION` (the version's first
/// word: `--version` adds the formats after it).
fn source(cmd: &clap::Command) -> String {
    let v = cmd.get_version().unwrap_or_default();
    let v = v.split_whitespace().next().unwrap_or_default();
    format!("stapvm {v}").trim_end().to_string()
}

/// stapvm(1)'s DESCRIPTION (clap's would repeat the NAME line).
const DESCRIPTION: &str = r#"## Description

**stapvm** runs SystemTap scripts on the Linux kernel without building a kernel module per script.
`stapvm compile` turns a script into a verified, bounded bytecode file (`.stpb`), with no kernel
headers, C compiler or debuginfo; `stapvm load` hands it to **stapvm.ko**, a module built once per
kernel, which verifies it again, arms the probes and runs the handlers in an in-kernel virtual
machine; the output comes back through per-CPU rings. `stapvm run` does both in one step, and stap's
own command lines work as they are (below).

`stapvm check` and `stapvm list` answer what stap's `-p2` and `-l`/`-L` answer; `stapvm doctor`
says what this machine lacks to run scripts.
"#;

/// What stapvm(1) says beyond clap's sections, in Markdown; `see_also`
/// are the other pages.
fn main_extra(see_also: &[String]) -> String {
    let mut md = String::from(
        r#"## Stap command lines

stap's own command lines work as they are: a command line that does not start with a subcommand is
rewritten into one before it is parsed.

| stap's form | stapvm's |
|---|---|
| `stapvm [OPTIONS] SCRIPT [ARGS]` | `stapvm run [OPTIONS] SCRIPT [ARGS]` |
| `stapvm -e 'TEXT' [ARGS]` | `stapvm run -e 'TEXT' [ARGS]` |
| `stapvm -p 1 ...` (parse) | `stapvm check --parse-only ...` |
| `stapvm -p 2 ...` (elaborate) | `stapvm check ...` |
| `stapvm -p 3 ...` (translate) | `stapvm compile --disasm ...` (the bytecode where stap prints C) |
| `stapvm -p 4 ...` (compile) | `stapvm compile ...` |
| `stapvm -p 5 ...` (run) | `stapvm run ...` |
| `stapvm -l PATTERN`, `stapvm -L PATTERN` | `stapvm list -l PATTERN`, `stapvm list -L PATTERN` |

A `-p` after `--` or as an option's value belongs to the script. `-g` (guru mode) and
`--suppress-time-limits` are refused: stapvm runs only bytecode the module's verifier accepts.
`-v` prints stap's per-pass lines (`Pass 1: parsed user script ...`) on standard error.

## Exit status

- `0`: success (for `run` and `load`: the session ended normally, by `exit()`, a signal, `-T` or the end
  of the `-c` command).
- `1`: an error, on standard error as `ERROR: ...` or as the compiler's diagnostics: the script does not
  parse or check, a file cannot be read or written, the module refuses the program or is not loaded, a
  session that ended in stap's error state (more than `MAXERRORS` errors or `MAXSKIPPED` skipped probes),
  `doctor` found a failure.
- `2`: a usage error (an unknown option, a missing argument).

## Files

- `/dev/stapvm`: the device of `stapvm.ko`, through which `load` and `run` hand a program to the kernel.
- `/proc/kallsyms`, `/sys/kernel/btf/vmlinux`: the kernel's symbols and types, read when a program is
  loaded (and by `check`).

## See also

"#,
    );
    md.push_str(&see_also.join(", "));
    md.push('\n');
    md
}

/// The two lines the roff crate starts every rendering with (they define
/// `\*(Aq`, its apostrophe).
const ROFF_PRELUDE: [&str; 2] = [".ie \\n(.g .ds Aq \\(aq", ".el .ds Aq '"];

/// `text` without the roff crate's prelude lines.
fn strip_prelude(text: &str) -> String {
    text.lines()
        .filter(|l| !ROFF_PRELUDE.contains(l))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `text` with `.nh` (no hyphenation: option names) after its `.TH` line.
fn no_hyphenation(text: &str) -> String {
    match text
        .find("\n.TH ")
        .map(|i| i + 1)
        .or(text.starts_with(".TH ").then_some(0))
    {
        Some(th) => {
            let eol = text[th..].find('\n').map_or(text.len(), |e| th + e + 1);
            format!("{}.nh\n{}", &text[..eol], &text[eol..])
        }
        None => text.to_string(),
    }
}

/// Renders one clap_mangen page into a string.
fn render(
    man: &clap_mangen::Man,
    w: impl Fn(&clap_mangen::Man, &mut Vec<u8>) -> std::io::Result<()>,
) -> String {
    let mut buf = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = w(man, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// stapvm(1): clap's NAME, SYNOPSIS, DESCRIPTION, OPTIONS, SUBCOMMANDS,
/// then `main_extra`, then clap's VERSION.
pub fn main_page(cmd: &clap::Command, see_also: &[String]) -> String {
    let man = clap_mangen::Man::new(cmd.clone())
        .source(source(cmd))
        .manual(MANUAL);
    let mut out = ROFF_PRELUDE.map(|l| format!("{l}\n")).concat();
    out.push_str(&strip_prelude(&render(&man, |m, b| m.render_title(b))));
    out.push_str(".nh\n");
    let clap_part =
        |out: &mut String, w: fn(&clap_mangen::Man, &mut Vec<u8>) -> std::io::Result<()>| {
            out.push_str(&strip_prelude(&render(&man, w)));
        };
    clap_part(&mut out, |m, b| m.render_name_section(b));
    clap_part(&mut out, |m, b| m.render_synopsis_section(b));
    out.push_str(&manmd::body(DESCRIPTION));
    clap_part(&mut out, |m, b| m.render_options_section(b));
    clap_part(&mut out, |m, b| m.render_subcommands_section(b));
    out.push_str(&manmd::body(&main_extra(see_also)));
    clap_part(&mut out, |m, b| m.render_version_section(b));
    out
}

/// The page of subcommand `sub` (`stapvm-compile.1`), ending with a SEE
/// ALSO of stapvm(1).
pub fn sub_page(root: &clap::Command, sub: &clap::Command) -> String {
    let man = clap_mangen::Man::new(sub.clone())
        .source(source(root))
        .manual(MANUAL);
    let mut out = no_hyphenation(&render(&man, |m, b| m.render(b)));
    out.push_str(&manmd::body("## See also\n\n**stapvm**(1)\n"));
    out
}

/// The visible subcommands of the built `root`.
fn visible(root: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    root.get_subcommands().filter(|s| !s.is_hide_set())
}

/// Writes stapvm.1, a page per visible subcommand and a page per `pages`
/// entry into `dir` (created if missing); returns the paths written.
/// `cmd` is the CLI's `Command` (with its `--version` text).
pub fn write(cmd: clap::Command, dir: &Path, pages: &[PageSpec]) -> Result<Vec<PathBuf>, Error> {
    let mut root = cmd.disable_help_subcommand(true);
    root.build();
    let sub_names: Vec<String> = visible(&root)
        .map(|s| format!("{}-{}", root.get_name(), s.get_name()))
        .collect();
    let mut see_also: Vec<String> = sub_names.iter().map(|n| format!("**{n}**(1)")).collect();
    see_also.extend(
        pages
            .iter()
            .map(|p| format!("**{}**({})", p.name, p.section)),
    );
    see_also.push("**stap**(1)".to_string());

    let mut files: Vec<(String, String)> = vec![(
        format!("{}.1", root.get_name()),
        main_page(&root, &see_also),
    )];
    for (sub, name) in visible(&root).zip(&sub_names) {
        files.push((format!("{name}.1"), sub_page(&root, sub)));
    }
    let version = source(&root);
    for p in pages {
        let md = std::fs::read_to_string(&p.file).map_err(|err| Error::Read {
            path: p.file.clone(),
            err,
        })?;
        let page = manmd::Page {
            name: p.name.clone(),
            section: p.section.clone(),
            date: String::new(),
            source: version.clone(),
            manual: MANUAL.to_string(),
        };
        let mut text = manmd::page(&md, &page);
        text.push_str(&manmd::body("## See also\n\n**stapvm**(1)\n"));
        files.push((p.file_name(), text));
    }
    let mut seen = std::collections::HashSet::new();
    for (name, _) in &files {
        if !seen.insert(name.as_str()) {
            return Err(Error::Duplicate(name.clone()));
        }
    }
    std::fs::create_dir_all(dir).map_err(|err| Error::Write {
        path: dir.to_path_buf(),
        err,
    })?;
    let mut written = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|err| Error::Write {
            path: path.clone(),
            err,
        })?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::CommandFactory;

    #[test]
    fn page_specs() {
        let p = parse_page("stapvm-language.7=docs/language.md").unwrap();
        assert_eq!(p.name, "stapvm-language");
        assert_eq!(p.section, "7");
        assert_eq!(p.file, PathBuf::from("docs/language.md"));
        assert_eq!(p.file_name(), "stapvm-language.7");
        assert_eq!(parse_page("a.b.3p=x").unwrap().name, "a.b");
        for bad in [
            "x.7", "=f", "x=f", "x.=f", ".7=f", "x.z=f", "x.7=", "../x.7=f", "a b.7=f",
        ] {
            assert!(parse_page(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn main_page_has_clap_and_extra_sections() {
        let mut root = Cli::command()
            .version("9.9 (formats)")
            .disable_help_subcommand(true);
        root.build();
        let page = main_page(&root, &["**stapvm-compile**(1)".to_string()]);
        let head = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n\
                    .TH stapvm 1  \"stapvm 9.9\" \"stapvm Manual\"\n.nh\n.SH NAME\n";
        assert!(page.starts_with(head), "{}", &page[..120]);
        // The roff crate's prelude once only.
        assert_eq!(page.matches(".el .ds Aq").count(), 1);
        for s in [
            ".SH NAME",
            ".SH SYNOPSIS",
            ".SH \"DESCRIPTION\"",
            ".SH SUBCOMMANDS",
            ".SH \"STAP COMMAND LINES\"",
            ".SH \"EXIT STATUS\"",
            ".SH \"SEE ALSO\"",
            ".SH VERSION",
            "stapvm\\-compile(1)",
            ".TS",
        ] {
            assert!(page.contains(s), "{s} missing");
        }
        // The hidden debug subcommand is not listed.
        assert!(!page.contains("stapvm\\-debug"), "{page}");
    }

    #[test]
    fn subcommand_page_has_no_hyphenation_and_see_also() {
        let mut root = Cli::command().version("9.9").disable_help_subcommand(true);
        root.build();
        let compile = root.find_subcommand("compile").unwrap();
        let page = sub_page(&root, compile);
        assert!(
            page.contains("\n.TH stapvm-compile 1  \"stapvm 9.9\" \"stapvm Manual\"\n.nh\n"),
            "{page}"
        );
        assert!(
            page.contains("\n.SH \"SEE ALSO\"\n.PP\n\\fBstapvm\\fR(1)\n"),
            "{page}"
        );
        assert!(page.contains("\\-\\-disasm"), "{page}");
        assert_eq!(no_hyphenation("x\n"), "x\n");
        assert_eq!(no_hyphenation(".TH a 1\nb\n"), ".TH a 1\n.nh\nb\n");
    }

    #[test]
    fn write_makes_every_page() {
        let dir = std::env::temp_dir().join(format!("stapvm-man-unit-{}", std::process::id()));
        let md = dir.join("x.md");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&md, "# Things\n\nSome `things`.\n").unwrap();
        let spec = PageSpec {
            name: "stapvm-things".into(),
            section: "7".into(),
            file: md.clone(),
        };
        let out = dir.join("out");
        let written = write(Cli::command(), &out, std::slice::from_ref(&spec)).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for n in [
            "stapvm.1",
            "stapvm-compile.1",
            "stapvm-doctor.1",
            "stapvm-things.7",
        ] {
            assert!(names.iter().any(|x| x == n), "{n} not in {names:?}");
        }
        assert!(!names.iter().any(|x| x.contains("debug")), "{names:?}");
        let things = std::fs::read_to_string(out.join("stapvm-things.7")).unwrap();
        assert!(things.contains("stapvm\\-things \\- Things\n"), "{things}");
        let main = std::fs::read_to_string(out.join("stapvm.1")).unwrap();
        assert!(main.contains("\\fBstapvm\\-things\\fR(7)"), "{main}");
        // A second page of the same name is refused.
        let err = write(Cli::command(), &out, &[spec.clone(), spec]).unwrap_err();
        assert!(matches!(err, Error::Duplicate(n) if n == "stapvm-things.7"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
