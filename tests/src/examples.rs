//! SystemTap's example scripts (`../shared/corpus/stp-examples/`) as the
//! guest's table-driven run (`example-cases`): which examples qualify, the
//! compile and run arguments their `.meta` gives, and the rule that says a
//! run showed its probes firing.
use std::path::{Path, PathBuf};

/// One example: its script and what its `.meta` says to pass.
#[derive(Debug, Clone)]
pub struct Example {
    /// The file stem (`io__iotop`).
    pub name: String,
    /// The script.
    pub script: PathBuf,
    /// Arguments after the script in `test_check` (`$1` ...).
    pub args: Vec<String>,
    /// `-D NAME=VAL` of `test_check`.
    pub defines: Vec<(String, String)>,
    /// What `test_installcheck` pipes into stap (`echo "X" | stap …`):
    /// the script's standard input (input.char / input.line), or None.
    pub stdin: Option<String>,
    /// `-T N` of `test_installcheck` (seconds; 1 when it gives none).
    pub seconds: u32,
    /// `test_installcheck` runs a target command (`-c CMD`).
    pub has_target_command: bool,
    /// Runs only as guru (`-g`), or with a target pid the guest cannot
    /// have (`-x $$`): not a candidate for the guest run.
    pub excluded: Option<&'static str>,
    /// The script asks for its target (`target()`) and its `usage:` line
    /// passes one (`-x PID` or `-c CMD`), which `test_installcheck` does
    /// not: the guest run gives it the workload as its `-c` command, as a
    /// user following the usage line would.
    pub wants_target: bool,
    /// The script probes the NFS client or server (`nfs.*`, `nfsd.*`,
    /// `sunrpc.*`): the guest run loads those modules and mounts an NFS
    /// export for its workload.
    pub probes_nfs: bool,
    /// The script probes the ext4 module (`module("ext4")`): the guest run
    /// loads it and mounts a small file system that its workload fills.
    pub probes_ext4: bool,
    /// `-x N` with a literal pid (traceaio.stp's `-x 1`, init, which the
    /// guest has too): passed on to the run.
    pub target_pid: Option<u32>,
}

/// Whether a probe point of `text` (between `probe` and its `{`) is in
/// one of the NFS families.
fn probes_nfs(text: &str) -> bool {
    probe_points(text).any(|w| {
        ["nfs.", "nfsd.", "sunrpc."]
            .iter()
            .any(|f| w.starts_with(f))
    })
}

/// Whether a probe point of `text` is in the ext4 module: a `probe` line
/// names `module("ext4")` (brace expansions `{kernel,module("ext4")}`
/// included, so not `probe_points`).
fn probes_ext4(text: &str) -> bool {
    text.lines()
        .map(str::trim_start)
        .any(|l| l.starts_with("probe") && l.contains("module(\"ext4\")"))
}

/// The words of the probe points of `text` (between each `probe` and its
/// `{`), comments left out.
fn probe_points(text: &str) -> impl Iterator<Item = String> {
    let code = text
        .lines()
        .map(str::trim_start)
        .filter(|l| !l.starts_with('#') && !l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    code.split("probe")
        .skip(1)
        .filter_map(|rest| rest.split_once('{').map(|(points, _)| points.to_string()))
        .flat_map(|points| {
            points
                .split([' ', ',', '\t', '\n'])
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect::<Vec<_>>()
        .into_iter()
}

/// Splits a shell command line on blanks, honouring '…' and "…" quotes
/// (enough for the `.meta` lines; backquotes are kept as text).
pub fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut quote: Option<char> = None;
    for ch in line.chars() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => cur.push(ch),
            None if ch == '\'' || ch == '"' => {
                quote = Some(ch);
                any = true;
            }
            None if ch.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            None => cur.push(ch),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The value of `key: …` in a `.meta` file.
fn meta_field<'a>(meta: &'a str, key: &str) -> Option<&'a str> {
    meta.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .map(str::trim)
}

/// Reads an example's `.meta` (None when it has none).
pub fn example(script: &Path) -> Option<Example> {
    let meta = std::fs::read_to_string(script.with_extension("meta")).ok()?;
    let name = script.file_stem()?.to_string_lossy().into_owned();
    let check = shell_words(meta_field(&meta, "test_check").unwrap_or(""));
    let run = shell_words(meta_field(&meta, "test_installcheck").unwrap_or(""));
    let mut ex = Example {
        name,
        script: script.to_path_buf(),
        args: Vec::new(),
        defines: Vec::new(),
        stdin: None,
        seconds: 1,
        has_target_command: false,
        excluded: None,
        wants_target: false,
        probes_nfs: false,
        probes_ext4: false,
        target_pid: None,
    };
    let text = std::fs::read_to_string(script).unwrap_or_default();
    let usage = shell_words(meta_field(&meta, "usage").unwrap_or(""));
    ex.wants_target = text.contains("target()")
        && usage.iter().any(|w| w == "-x" || w == "-c")
        && !run.iter().any(|w| w == "-c" || w == "-x");
    ex.probes_nfs = probes_nfs(&text);
    ex.probes_ext4 = probes_ext4(&text);
    let mut after_script = false;
    let mut it = check.iter().skip(1).peekable();
    while let Some(w) = it.next() {
        if w.ends_with(".stp") && !after_script {
            after_script = true;
        } else if w == "-D" {
            if let Some((n, v)) = it.next().and_then(|d| d.split_once('=')) {
                ex.defines.push((n.to_string(), v.to_string()));
            }
        } else if let Some(d) = w.strip_prefix("-D").filter(|d| !d.is_empty()) {
            if let Some((n, v)) = d.split_once('=') {
                ex.defines.push((n.to_string(), v.to_string()));
            }
        } else if w.starts_with('-') && w.len() > 1 && !w[1..].starts_with(char::is_numeric) {
            if w.contains('g') && !w.starts_with("--") {
                ex.excluded = Some("guru (-g)");
            }
            if w == "-x" {
                match it.peek().and_then(|p| p.parse().ok()) {
                    Some(pid) => ex.target_pid = Some(pid),
                    None => ex.excluded = Some("needs a target pid (-x)"),
                }
            }
            // Flags with a value: skip it.
            if matches!(w.as_str(), "-c" | "-x" | "-d" | "-I" | "-G" | "-o" | "-S") {
                it.next();
            }
        } else if after_script {
            ex.args.push(w.clone());
        }
    }
    // `echo WORDS | stap …`: WORDS are the script's standard input.
    let mut run = run;
    if run.first().map(String::as_str) == Some("echo") {
        if let Some(bar) = run.iter().position(|w| w == "|") {
            ex.stdin = Some(run[1..bar].join(" ") + "\n");
            run.drain(..=bar);
        }
    }
    // Arguments only `test_installcheck` gives (eventcount's probe
    // points): the run stap's test makes.
    if ex.args.is_empty() {
        let mut after = false;
        let mut it = run.iter().skip(1);
        while let Some(w) = it.next() {
            if w.ends_with(".stp") && !after {
                after = true;
            } else if w.starts_with('-') && w.len() > 1 {
                if matches!(
                    w.as_str(),
                    "-c" | "-x" | "-d" | "-I" | "-G" | "-o" | "-S" | "-T" | "-D"
                ) {
                    it.next();
                }
            } else if after {
                ex.args.push(w.clone());
            }
        }
    }
    let mut rit = run.iter();
    while let Some(w) = rit.next() {
        match w.as_str() {
            "-T" => {
                if let Some(n) = rit.next().and_then(|n| n.parse().ok()) {
                    ex.seconds = n;
                }
            }
            "-c" => ex.has_target_command = true,
            _ => {}
        }
    }
    Some(ex)
}

/// Every example of `dir` with a `.meta`, sorted by name.
pub fn examples(dir: &Path) -> Vec<Example> {
    let mut v: Vec<Example> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "stp"))
        .filter_map(|p| example(&p))
        .collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

/// Why a guest run's output (stdout and stderr, with `-v`) does not show
/// a working example: an `ERROR`, no exit summary, or no probe besides
/// `begin`/`end`/`error` that fired (when the script has one).
pub fn judge(output: &str) -> Result<(), String> {
    if let Some(l) = output.lines().find(|l| l.starts_with("ERROR")) {
        return Err(format!("error: {l}"));
    }
    // The script's own output may end without a newline, so the summary
    // can share a line with it.
    if !output.lines().any(|l| l.contains("stapvm: start ")) {
        return Err("no exit summary (stapvm did not run to the end)".into());
    }
    let mut event_probes = 0;
    let mut fired = 0;
    let mut any_fired = false;
    for l in output.lines() {
        if l.contains("stapvm: ") {
            continue;
        }
        let Some((point, rest)) = l.rsplit_once(": hits ") else {
            continue;
        };
        let Some(hits) = rest.split(',').next().and_then(|h| h.parse::<u64>().ok()) else {
            continue;
        };
        any_fired |= hits > 0;
        let head = point.split(['.', '(']).next().unwrap_or("");
        if !matches!(head, "begin" | "end" | "error") {
            event_probes += 1;
            if hits > 0 {
                fired += 1;
            }
        }
    }
    match (event_probes, fired) {
        (0, _) if any_fired => Ok(()),
        (0, _) => Err("no probe fired".into()),
        (_, 0) => Err(format!("none of its {event_probes} event probes fired")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_quotes() {
        assert_eq!(
            shell_words(r#"stap -p4 a.stp 'kernel.function("x")' "a b" c"#),
            vec!["stap", "-p4", "a.stp", "kernel.function(\"x\")", "a b", "c"]
        );
        assert_eq!(shell_words("x ''"), vec!["x", ""]);
    }

    #[test]
    fn nfs_families() {
        assert!(probes_nfs("probe nfsd.proc.entries, nfsd.entries {"));
        assert!(probes_nfs(
            "probe begin {}\nprobe vfs.read,\n  sunrpc.clnt.* {}"
        ));
        assert!(!probes_nfs("probe vfs.read { x = \"nfs.\" }"));
        assert!(!probes_nfs("probe kernel.function(\"nfs_file_read\") {}"));
        assert!(probes_ext4(
            "probe {kernel,module(\"ext4\")}.function(\"ext4_should_retry_alloc\").return ? {"
        ));
        assert!(!probes_ext4(
            "probe vfs.read {\n x = \"module(\\\"ext4\\\")\"\n}"
        ));
    }

    #[test]
    fn literal_target_pids_run_and_shell_ones_do_not() {
        let dir = std::env::temp_dir().join(format!("stapvm-ex-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let one = |name: &str, check: &str| {
            let script = dir.join(format!("{name}.stp"));
            std::fs::write(&script, "probe begin {}\n").unwrap();
            std::fs::write(
                script.with_extension("meta"),
                format!("test_check: {check}\ntest_installcheck: stap {name}.stp -T 2\n"),
            )
            .unwrap();
            example(&script).unwrap()
        };
        let aio = one("aio", "stap -p4 aio.stp -x 1");
        assert_eq!(
            (aio.target_pid, aio.excluded, aio.seconds),
            (Some(1), None, 2)
        );
        assert!(aio.args.is_empty());
        let sh = one("sh", "stap -p4 sh.stp -x $$");
        assert_eq!(sh.target_pid, None);
        assert!(sh.excluded.is_some());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn judging() {
        let ok = "x\nstapvm: start 1 ms, ran 2 ms\nbegin: hits 1, skipped 0\n\
                  kernel.function(\"vfs_read\"): hits 3, skipped 0\n";
        assert!(judge(ok).is_ok());
        let idle = ok.replace("hits 3", "hits 0");
        assert!(judge(&idle).unwrap_err().contains("none of its 1"));
        assert!(judge(&format!("ERROR: division by zero\n{ok}")).is_err());
        assert!(judge("begin: hits 1, skipped 0\n").is_err());
        let only_begin = "stapvm: start 1 ms\nbegin: hits 1, skipped 0\n";
        assert!(judge(only_begin).is_ok());
        // The exit summary is not a probe, and may follow output that
        // did not end its line.
        let glued = "\x1b[Hostapvm: start 1 ms, ran 2 ms: hits 0, skipped 0, dropped 0\n\
                     timer.ms(10): hits 0, skipped 0\n";
        assert!(judge(glued).unwrap_err().contains("none of its 1"));
    }
}
