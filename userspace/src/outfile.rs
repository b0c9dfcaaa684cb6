//! The script's output destination: standard output, or stap's `-o FILE`.
//! `switch_file()` moves a file output on to the next file as stapio does
//! in stream mode: the output starts in FILE, and the n-th switch closes
//! the current file and goes on in `FILE.n` (FILE.1, FILE.2, ...), created
//! or truncated. On standard output switch_file() does nothing. With
//! stap's `-S SIZE[,N]` the files are FILE.0, FILE.1, ...: a write that
//! would take the current one past SIZE megabytes goes to the next, and
//! with N only the last N files are kept (the oldest is removed).
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
        /// Bytes written to it.
        written: u64,
        /// `-S`: the size of one file in bytes and how many to keep (0:
        /// all).
        limit: Option<(u64, u32)>,
    },
}

/// Parses stap's `-S SIZE[,N]` (SIZE in megabytes, at least 1).
pub fn parse_size_limit(s: &str) -> Result<(u64, u32), String> {
    let (size, count) = match s.split_once(',') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let size: u64 = size
        .parse()
        .ok()
        .filter(|&v| (1..=4096).contains(&v))
        .ok_or_else(|| format!("invalid size '{size}': megabytes, 1 to 4096"))?;
    let count: u32 = match count {
        Some(c) => c
            .parse()
            .ok()
            .filter(|&v| v >= 1)
            .ok_or_else(|| format!("invalid file count '{c}'"))?,
        None => 0,
    };
    Ok((size, count))
}

impl OutFile {
    /// FILE, created or truncated; with `limit` (`-S`, from
    /// `parse_size_limit`) FILE.0.
    pub fn create(path: &Path, limit: Option<(u64, u32)>) -> io::Result<Self> {
        let first = match limit {
            Some(_) => Self::numbered(path, 0),
            None => path.to_path_buf(),
        };
        Ok(OutFile::File {
            path: path.to_path_buf(),
            n: 0,
            file: File::create(first)?,
            written: 0,
            limit: limit.map(|(mb, count)| (mb << 20, count)),
        })
    }

    /// `FILE.n`.
    fn numbered(path: &Path, n: u32) -> PathBuf {
        let mut s = path.as_os_str().to_owned();
        s.push(format!(".{n}"));
        PathBuf::from(s)
    }

    /// Standard output.
    pub fn stdout() -> Self {
        OutFile::Stdout(io::stdout())
    }

    /// `switch_file()`: go on in the next file (the caller flushed); with
    /// a file count, remove the one that falls out of it (stapio).
    pub fn switch(&mut self) -> io::Result<()> {
        if let OutFile::File {
            path,
            n,
            file,
            written,
            limit,
        } = self
        {
            *file = File::create(Self::numbered(path, *n + 1))?;
            *n += 1;
            *written = 0;
            if let Some((_, count)) = *limit {
                if count > 0 && *n >= count {
                    // Already gone is fine, as for stapio.
                    let _ = std::fs::remove_file(Self::numbered(path, *n - count));
                }
            }
        }
        Ok(())
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let full = match self {
            OutFile::Stdout(s) => return s.write(buf),
            OutFile::File { written, limit, .. } => {
                limit.is_some_and(|(max, _)| *written > 0 && *written + buf.len() as u64 > max)
            }
        };
        if full {
            self.switch()?;
        }
        match self {
            OutFile::Stdout(s) => s.write(buf),
            OutFile::File { file, written, .. } => {
                let k = file.write(buf)?;
                *written += k as u64;
                Ok(k)
            }
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
        let mut o = OutFile::create(&path, None).unwrap();
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

    #[test]
    fn size_limit_numbers_from_zero_and_keeps_n_files() {
        assert_eq!(parse_size_limit("2,3"), Ok((2, 3)));
        assert_eq!(parse_size_limit("1"), Ok((1, 0)));
        assert!(parse_size_limit("0").is_err());
        assert!(parse_size_limit("1,0").is_err());
        assert!(parse_size_limit("x").is_err());
        let dir = std::env::temp_dir().join(format!("stapvm-outfile-s-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out");
        let mut o = OutFile::create(&path, Some((1, 2))).unwrap();
        let mb = vec![b'x'; 1 << 20];
        for _ in 0..4 {
            o.write_all(&mb).unwrap();
        }
        o.switch().unwrap();
        o.write_all(b"last\n").unwrap();
        o.flush().unwrap();
        assert!(!path.exists());
        let names: Vec<bool> = (0..5)
            .map(|k| dir.join(format!("out.{k}")).exists())
            .collect();
        assert_eq!(names, vec![false, false, false, true, true]);
        assert_eq!(std::fs::metadata(dir.join("out.3")).unwrap().len(), 1 << 20);
        assert_eq!(std::fs::read(dir.join("out.4")).unwrap(), b"last\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
