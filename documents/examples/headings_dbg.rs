#![allow(clippy::print_stdout)]
use deepr_documents::{read_bounded, Format, Limits, READ_TIMEOUT};
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let needle = std::env::args().nth(2).unwrap();
    let format = Format::from_extension(
        std::path::Path::new(&path)
            .extension()
            .unwrap()
            .to_str()
            .unwrap(),
    )
    .unwrap();
    let doc = read_bounded(
        std::fs::read(&path).unwrap(),
        format,
        Limits::default(),
        READ_TIMEOUT,
    )
    .unwrap();
    for m in &doc.marks {
        if let Some(l) = m.heading {
            println!(
                "h{} @{} {:?} fresh={}",
                l,
                m.at,
                &doc.text[m.at..(m.at + 40).min(doc.text.len())],
                m.fresh
            );
        }
    }
    let at = doc.text.find(&needle).unwrap();
    println!("{needle} @{at}: {:?}", doc.heading_path(at));
}
