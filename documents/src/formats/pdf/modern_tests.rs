//! PDFs as lopdf writes them — object streams, cross-reference streams, encryption —
//! read as they always did, and their object streams are held to the part limit like
//! any other stream (each file generated here).

use super::limits_tests::{encrypted_with_object_stream, MB};
use super::*;
use crate::writers::{blocks, write_pdf, Meta};

/// `bytes` saved again by lopdf with object streams and a cross-reference stream, the
/// first page's content stream `/Length` made an object (which lopdf then puts in an
/// object stream, as pdfTeX does).
fn modern(bytes: &[u8]) -> Vec<u8> {
    let mut pdf = Pdf::load_mem(bytes).unwrap();
    let page = *pdf.get_pages().get(&1).unwrap();
    let content = pdf.get_page_contents(page)[0];
    let length = match pdf.get_object(content).unwrap() {
        Object::Stream(stream) => stream.content.len() as i64,
        _ => unreachable!(),
    };
    let length_id = pdf.add_object(Object::Integer(length));
    if let Ok(Object::Stream(stream)) = pdf.get_object_mut(content) {
        stream.dict.set("Length", Object::Reference(length_id));
    }
    let mut out = Vec::new();
    pdf.save_modern(&mut out).unwrap();
    out
}

#[test]
fn object_streams_cross_reference_streams_and_encryption_read_as_before() {
    let meta = Meta {
        title: "Yard memo".into(),
        modified: "2026-04-14T09:30:00Z".into(),
        ..Meta::default()
    };
    let pages = [
        blocks("# Harbor Street\n\nThe yard has 24 trailer bays."),
        blocks("## Doors\n\nSix doors take refrigerated trailers."),
    ];
    let plain = write_pdf(&meta, &pages).unwrap();
    let expected = read(&plain, &Limits::default()).unwrap();
    let with_streams = modern(&plain);
    assert!(contains(&with_streams, b"/ObjStm") && contains(&with_streams, b"/XRef"));
    // The content's length sits in an object stream: lopdf could not place it while
    // loading, and the reader takes the content afterwards.
    let doc = read(&with_streams, &Limits::default()).unwrap();
    assert_eq!(
        (doc.text.as_str(), doc.title.as_str()),
        (expected.text.as_str(), "Yard memo")
    );
    assert!(doc.gaps.is_empty(), "{:?}", doc.gaps);
    // Encrypted, with the font in an object stream: stock lopdf and pdf-extract read
    // it, and so does the reader.
    let encrypted = encrypted_with_object_stream(1000);
    let stock = pdf_extract::extract_text_from_mem(&encrypted).unwrap();
    assert!(stock.contains("24 trailer bays"), "{stock}");
    let doc = read(&encrypted, &Limits::default()).unwrap();
    assert!(doc.text.contains("24 trailer bays"), "{}", doc.text);
    assert!(doc.gaps.is_empty(), "{:?}", doc.gaps);
}

#[test]
fn an_encrypted_object_stream_that_inflates_past_the_part_limit_is_cut_too() {
    let doc = read(&encrypted_with_object_stream(64 * MB), &Limits::tight()).unwrap();
    assert!(doc.text.contains("24 trailer bays"), "{}", doc.text);
    assert_eq!(
        doc.gaps,
        ["object stream 5 inflates past 4 MB: the objects past there were not read"]
    );
}
