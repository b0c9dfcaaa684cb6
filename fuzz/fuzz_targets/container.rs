//! Fuzz target: the `.stpb` container reader on arbitrary bytes. It must
//! never panic, and whatever it accepts must survive a write/read round
//! trip unchanged.
#![no_main]
use libfuzzer_sys::fuzz_target;
use vm_spec::container;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = container::read(data) {
        let again = container::read(&container::write(&p)).expect("a written program reads back");
        assert_eq!(p, again, "container round trip changed the program");
    }
});
