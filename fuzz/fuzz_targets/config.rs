//! The config file parser on any text: settings or a one-line error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(error) = deepr_settings::parse(text) {
        assert!(!error.contains('\n'), "one line: {error}");
    }
});
