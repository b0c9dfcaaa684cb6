//! Tapset built-ins end to end in user space (print_char, the endian
//! swaps, text_strn / string_quoted, tokenize, histogram indexing and
//! foreach, sprint of a histogram, the @prints macros of the tapset
//! library): scripts compiled and run on the C core (`HostSession`).
//!
//! N.B. reconstructed from the strings of the test binary after the file
//! was overwritten by mistake (the syscall tapset's tests live in
//! tapset_syscalls.rs); the author may want to check it against theirs.
mod common;

/// Runs begin then end probes; the output, then an `ERROR:` line per
/// run-time error.
fn run(src: &str) -> String {
    common::run_begin_end(src, &Default::default()).report("")
}

#[test]
fn endian_swaps_on_little_endian() {
    assert_eq!(
        run(r#"probe begin {
  printf("%x %x %x\n", big_endian2(0x12345678), big_endian4(0x12345678), big_endian8(0x0012345678abcdef))
  printf("%x %x %x\n", little_endian2(0x12345678), little_endian4(0x1234567890), little_endian8(-1))
  printf("%d\n", big_endian8(0x80))
}"#),
        "7856 78563412 efcdab7856341200\n5678 34567890 ffffffffffffffff\n-9223372036854775808\n"
    );
}

#[test]
fn print_char_writes_the_low_byte() {
    assert_eq!(
        run("probe begin { print_char(65); print_char(0x142); print_char(10) }"),
        "AB\n"
    );
}

#[test]
fn a_script_macro_shadows_the_library() {
    assert_eq!(
        run("@define prints(x) %( println(\"mine \", @x) %)\nprobe begin { @prints(42) }"),
        "mine 42\n"
    );
}

#[test]
fn histogram_buckets_index_and_foreach() {
    assert_eq!(
        run(r#"global s, l
probe begin {
  s <<< 5; s <<< 6; s <<< 9; l <<< 12; l <<< 0
  n = 0
  foreach (b in @hist_log(s) limit 70) {
    n++
    if (@hist_log(s)[b]) printf("b%d=%d ", b, @hist_log(s)[b])
  }
  println(n)
  foreach (b in @hist_linear(l, 0, 20, 10)) printf("%d:%d ", b, @hist_linear(l, 0, 20, 10)[b])
  println("")
}"#),
        "b67=2 b68=1 70\n0:0 1:1 2:1 3:0 4:0 \n"
    );
}

#[test]
fn prints_macros_from_the_tapset_library() {
    assert_eq!(
        run(r#"global s, a
probe begin { s <<< 3; s <<< 5; a[1, "x"] <<< 7; a[2, "y"] <<< 1; a[2, "y"] <<< 2 }
probe end { @prints(s) @prints2(a) }"#),
        "@count=2 @min=3 @max=5 @sum=8 @avg=4\n\
         [2,y] @count=2 @min=1 @max=2 @sum=3 @avg=1\n\
         [1,x] @count=1 @min=7 @max=7 @sum=7 @avg=7\n"
    );
}

#[test]
fn sprint_of_a_histogram_is_its_print_out() {
    let fills = [
        "s <<< -100; s <<< 3; s <<< 3; s <<< 1000",
        "for (i = 0; i < 300; i++) s <<< i * i",
        "s <<< 1; s <<< 100000000",
        "for (i = 0; i < 128; i++) s <<< 0",
    ];
    let hists = [
        "@hist_linear(s, 0, 0, 1)",
        "@hist_linear(s, -50, 200, 25)",
        "@hist_log(s)",
    ];
    for fill in fills {
        for h in hists {
            let printed = run(&format!("global s\nprobe begin {{ {fill}; print({h}) }}"));
            let sprinted = run(&format!(
                "global s\nprobe begin {{ {fill}; x = sprint({h}); print(x) }}"
            ));
            // sprint's string holds at most MAXSTRINGLEN - 1 bytes.
            assert!(
                !sprinted.is_empty()
                    && printed.starts_with(&sprinted)
                    && (sprinted == printed || sprinted.len() == 511),
                "{fill}: {h}\n{printed}\n{sprinted}"
            );
        }
    }
}

#[test]
fn tokenize_keeps_its_state_between_calls() {
    assert_eq!(
        run(r#"function toks(s, d) {
  t = tokenize(s, d)
  while (t != "") { print(t, "|"); t = tokenize(d) }
  println("")
}
probe begin {
  toks("1,,2,3, ,4,", ",")
  toks("no delimiters here", ",")
  toks("", ",")
  toks("a, b,c", ", ")
  toks("xyz", "")
}
probe end { println(tokenize(","), "[", tokenize("p;q", ";"), "]") }"#),
        "1|2|3| |4|\nno delimiters here|\n\na|b|c|\nxyz|\n[p]\n"
    );
}

#[test]
fn text_strn_and_string_quoted_follow_stp_text_str() {
    assert_eq!(
        run(r#"probe begin {
  a = "1234567890"
  println(text_strn(a, 10, 1), " ", text_strn(a, 12, 1), " ", text_strn(a.a, 12, 1))
  b = "\077\231\a\n\n\r\n"
  println(text_strn(b, 15, 1), " ", text_strn(b, 10, 0), " ", text_str(b))
  println(string_quoted(""), string_quoted("it's \"x\"\\"))
  println(text_str("\xe2\x82\xac \xf0\x9f\x98\x80 \xc0\x80"))
  println(text_strn("\xe2\x82\xacabcdef", 7, 1))
}"#),
        "\"12345\"... \"1234567890\" \"1234567\"...\n\
         \"?\\231\\a\\n\"... ?\\231\\a\\n ?\\231\\a\\n\\n\\r\\n\n\
         \"\"\"it's \\\"x\\\"\\\\\"\n\
         \\u20AC \\U0001F600 \\300\\200\n\
         \"\"...\n"
    );
}
