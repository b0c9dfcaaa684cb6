//! The script's output destination: standard output, or stap's `-o FILE`.
//! `switch_file()` moves a file output on to the next file as stapio does
//! in stream mode: the output starts in FILE, and the n-th switch closes
//! the current file and goes on in `FILE.n` (FILE.1, FILE.2, ...), created
//! or truncated. On standard output switch_file() does nothing.
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Where the output goes.
pub enum OutFile {
    /// Standard output.
    Stdout(io::Stdout),
    /// `-o FILE`.
    File {
        /// FILE as given.
        path: PathBuf,
        /// Switches so far (the current file is FILE.n for n > 0).
        n: u32,
        /// The open file.
        file: File,
    },
}

impl OutFile {
    /// FILE, created or truncated.
    pub fn create(path: &Path) -> io::Result<Self> {
        Ok(OutFile::File {
            path: path.to_path_buf(),
            n: 0,
            file: File::create(path)?,
        })
    }

    /// Standard output.
    pub fn stdout() -> Self {
        OutFile::Stdout(io::stdout())
    }

    /// The name of the n-th file of `path`.
    pub fn name(path: &Path, n: u32) -> PathBuf {
        if n == 0 {
            return path.to_path_buf();
        }
        let mut s = path.as_os_str().to_owned();
        s.push(format!(".{n}"));
        PathBuf::from(s)
    }

    /// `switch_file()`: go on in the next file (the caller flushed).
    pub fn switch(&mut self) -> io::Result<()> {
        if let OutFile::File { path, n, file } = self {
            let next = Self::name(path, *n + 1);
            *file = File::create(next)?;
            *n += 1;
        }
        Ok(())
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            OutFile::Stdout(s) => s.write(buf),
            OutFile::File { file, .. } => file.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            OutFile::Stdout(s) => s.flush(),
            OutFile::File { file, .. } => file.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_goes_on_in_numbered_files() {
        let dir = std::env::temp_dir().join(format!("stapvm-outfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out");
        let mut o = OutFile::create(&path).unwrap();
        o.write_all(b"zero\n").unwrap();
        o.switch().unwrap();
        o.write_all(b"one\n").unwrap();
        o.switch().unwrap();
        o.write_all(b"two\n").unwrap();
        o.flush().unwrap();
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(path.clone()), "zero\n");
        assert_eq!(read(dir.join("out.1")), "one\n");
        assert_eq!(read(dir.join("out.2")), "two\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
