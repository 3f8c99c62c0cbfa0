#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mneme_conformance::fuzz::instructions(data));
