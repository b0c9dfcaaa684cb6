//! Fuzz target: the `.stpb` container reader on arbitrary bytes, as a
//! whole file and as a payload sealed with a valid length and checksum
//! (`container::seal`, so that mutations reach the decoder past the
//! checksum). It must never panic, and whatever it accepts must survive a
//! write/read round trip unchanged.
#![no_main]
use libfuzzer_sys::fuzz_target;
use vm_spec::container;

fuzz_target!(|data: &[u8]| {
    for file in [data.to_vec(), container::seal(data)] {
        if let Ok(p) = container::read(&file) {
            let again =
                container::read(&container::write(&p)).expect("a written program reads back");
            assert_eq!(p, again, "container round trip changed the program");
        }
    }
});
