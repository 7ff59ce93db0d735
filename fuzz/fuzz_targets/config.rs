//! The config file parser and the research plan parser (`plan.toml`) on any text:
//! settings or a plan, or a one-line error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(error) = deepr_settings::parse(text) {
        assert!(!error.contains('\n'), "one line: {error}");
    }
    match deepr_settings::parse_plan(text) {
        Ok(plan) => {
            // What it reads, it writes back and reads again the same.
            let again = deepr_settings::parse_plan(&deepr_settings::render_plan(&plan, &[]));
            assert_eq!(again.as_ref(), Ok(&plan));
        }
        Err(error) => assert!(!error.to_string().contains('\n'), "one line: {error}"),
    }
});
