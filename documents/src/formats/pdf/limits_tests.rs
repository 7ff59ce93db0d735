//! The PDF reader's limits on hostile files, each generated here: content, object and
//! cross-reference streams that inflate to far more than the limits, pages past the
//! document's limit, forms that draw themselves, a page tree that loops. Files lopdf
//! writes with object streams, cross-reference streams and encryption are in
//! `modern_tests.rs`.

use super::*;
use crate::writers::{assemble_pdf, deflate_bomb, one_page_pdf, stream_object};

pub(super) const FACT: &[u8] =
    b"BT /F1 12 Tf 72 720 Td (The Harbor Street yard has 24 trailer bays.) Tj ET\n";
pub(super) const MB: u64 = 1024 * 1024;

/// A PDF of `pages`, each a content stream's dictionary entries and data.
fn pages_pdf(pages: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let kids: Vec<String> = (0..pages.len())
        .map(|i| format!("{} 0 R", 4 + 2 * i))
        .collect();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            pages.len()
        )
        .into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
    ];
    for (i, (dict, data)) in pages.iter().enumerate() {
        objects.push(format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>", 5 + 2 * i).into_bytes());
        objects.push(stream_object(dict, data));
    }
    assemble_pdf(&objects)
}

/// A content stream that shows `text`.
fn showing(text: &str) -> Vec<u8> {
    format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET\n").into_bytes()
}

#[test]
fn a_content_stream_that_inflates_past_the_page_limit_reads_as_its_first_part() {
    for (limits, spaces) in [(Limits::tight(), 64 * MB), (Limits::default(), 300 * MB)] {
        let bytes = one_page_pdf("/Filter /FlateDecode", &deflate_bomb(FACT, spaces), "", &[]);
        let doc = read(&bytes, &limits).unwrap();
        assert!(doc.text.contains("24 trailer bays"), "{}", doc.text);
        let page_limit = crate::human_bytes(limits.max_page_content_bytes);
        assert_eq!(
            doc.gaps,
            [format!("page 1: content read up to {page_limit} a page (the most one page may hand the PDF parser)")]
        );
    }
    // Never compressed, the same: held to the page limit.
    let mut plain = FACT.to_vec();
    plain.resize(2 << 20, b' ');
    let doc = read(&one_page_pdf("", &plain, "", &[]), &Limits::tight()).unwrap();
    assert!(
        doc.gaps[0].starts_with("page 1: content read up to 256 KB"),
        "{:?}",
        doc.gaps
    );
}

#[test]
fn past_the_documents_limit_the_later_pages_are_not_read() {
    let limits = Limits {
        max_page_content_bytes: 1 << 20,
        max_unpacked_bytes: 3 << 20,
        ..Limits::tight()
    };
    // Each page's content inflates to 900 KB: the fourth passes 3 MB.
    let pages: Vec<(&str, Vec<u8>)> = (1..=6)
        .map(|n| {
            let text = showing(&format!("Page {n} says the yard has {n}0 bays."));
            ("/Filter /FlateDecode", deflate_bomb(&text, 900 << 10))
        })
        .collect();
    let doc = read(&pages_pdf(&pages), &limits).unwrap();
    for n in 1..=4 {
        assert!(
            doc.text.contains(&format!("Page {n} says")),
            "{n}: {}",
            doc.text
        );
    }
    assert!(!doc.text.contains("Page 5 says"), "{}", doc.text);
    assert_eq!(
        doc.gaps,
        ["pages 1–4 of 6: the rest would inflate past 3 MB, the most one PDF may"]
    );
}

#[test]
fn a_page_whose_content_streams_together_pass_the_limit_reads_them_joined_and_cut() {
    let limits = Limits::tight();
    let half = deflate_bomb(FACT, 200 << 10);
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents [5 0 R 5 0 R 5 0 R 6 0 R] >>".to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
        stream_object("/Filter /FlateDecode", &half),
        stream_object("", &showing("Never reached.")),
    ];
    let doc = read(&assemble_pdf(&objects), &limits).unwrap();
    assert!(doc.text.contains("24 trailer bays"), "{}", doc.text);
    assert!(!doc.text.contains("Never reached"), "{}", doc.text);
    assert!(
        doc.gaps[0].starts_with("page 1: content read up to 256 KB"),
        "{:?}",
        doc.gaps
    );
}

#[test]
fn an_object_stream_that_inflates_past_the_part_limit_keeps_the_objects_before_the_cut() {
    // Object 6 is an object stream holding the font (object 7) and then spaces: lopdf
    // would inflate all of it while loading.
    let font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";
    let index = b"7 0 ";
    let held = [&index[..], font].concat();
    let objstm = stream_object(
        &format!(
            "/Type /ObjStm /N 1 /First {} /Filter /FlateDecode",
            index.len()
        ),
        &deflate_bomb(&held, 64 * MB),
    );
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 7 0 R >> >> /Contents 5 0 R >>".to_vec(),
        b"<< >>".to_vec(),
        stream_object("", FACT),
        objstm,
    ];
    let doc = read(&assemble_pdf(&objects), &Limits::tight()).unwrap();
    assert!(doc.text.contains("24 trailer bays"), "{}", doc.text);
    assert_eq!(
        doc.gaps,
        ["object stream 6 inflates past 4 MB: the objects past there were not read"]
    );
}

/// A PDF whose cross-reference stream (object 6, where `startxref` points) has the
/// dictionary entries `dict` and the data `data`.
fn with_xref_stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let plain = one_page_pdf("", FACT, "", &[]);
    let cut = plain.windows(4).position(|w| w == b"xref").unwrap();
    let mut out = plain[..cut].to_vec();
    let at = out.len();
    out.extend_from_slice(b"6 0 obj\n");
    out.extend_from_slice(&stream_object(
        &format!("/Type /XRef /Size 7 /W [1 4 2] /Root 1 0 R {dict}"),
        data,
    ));
    out.extend_from_slice(format!("\nendobj\nstartxref\n{at}\n%%EOF\n").as_bytes());
    out
}

#[test]
fn a_cross_reference_stream_past_the_part_limit_or_with_rows_past_its_data_is_refused() {
    let bomb = with_xref_stream("/Filter /FlateDecode", &deflate_bomb(b"", 64 * MB));
    assert_eq!(
        read(&bomb, &Limits::tight()),
        Err(ReadError::TooLarge(
            "its cross-reference stream inflates past 4 MB".into()
        ))
    );
    let small = deflate_bomb(b"", 1000);
    let rows = with_xref_stream(
        "/Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 4000000000 >>",
        &small,
    );
    assert!(
        matches!(read(&rows, &Limits::tight()), Err(ReadError::Malformed { ref detail, .. }) if detail.contains("predictor rows")),
        "{:?}",
        read(&rows, &Limits::tight())
    );
}

/// One page drawing form `X1` (object 6, `form`), which holds `more` forms after it.
fn with_forms(form: Vec<u8>, more: Vec<Vec<u8>>) -> Vec<u8> {
    let content = [FACT, b"/X1 Do\n"].concat();
    let objects: Vec<Vec<u8>> = [vec![form], more].concat();
    one_page_pdf("", &content, "/XObject << /X1 6 0 R >>", &objects)
}

/// A chain of `depth` forms, each drawing the next (`/X1` in its own resources).
fn chain_of_forms(depth: usize) -> Vec<u8> {
    let form = |n: usize| {
        let (xobject, content) = if n < depth {
            (
                format!("/XObject << /X1 {} 0 R >>", 7 + n - 1),
                b"/X1 Do\n".to_vec(),
            )
        } else {
            (String::new(), showing("The deepest form says 24 bays."))
        };
        let resources = format!("/Resources << /Font << /F1 4 0 R >> {xobject} >>");
        stream_object(
            &format!("/Type /XObject /Subtype /Form /BBox [0 0 612 792] {resources}"),
            &content,
        )
    };
    let forms: Vec<Vec<u8>> = (1..=depth).map(form).collect();
    with_forms(forms[0].clone(), forms[1..].to_vec())
}

#[test]
fn forms_that_would_recurse_without_end_are_a_gap_not_a_crash() {
    // A form with no resources of its own, drawing itself through the page's: pdf-extract
    // would recurse until the stack overflowed and the process aborted.
    let looping = with_forms(
        stream_object(
            "/Type /XObject /Subtype /Form /BBox [0 0 10 10]",
            b"/X1 Do\n",
        ),
        Vec::new(),
    );
    let err = read(&looping, &Limits::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("page 1 could not be read: a form on it draws itself"),
        "{err}"
    );
    let fine = read(
        &chain_of_forms(MAX_FORM_DEPTH_FOR_TESTS),
        &Limits::default(),
    )
    .unwrap();
    assert!(
        fine.text.contains("deepest form says 24 bays"),
        "{}",
        fine.text
    );
    let deep = read(
        &chain_of_forms(MAX_FORM_DEPTH_FOR_TESTS + 1),
        &Limits::default(),
    )
    .unwrap_err();
    assert!(deep.to_string().contains("more than 16 deep"), "{deep}");
}

const MAX_FORM_DEPTH_FOR_TESTS: usize = forms::MAX_FORM_DEPTH;

#[test]
fn a_page_tree_that_loops_is_no_crash_and_other_pages_still_read() {
    // Page 2 has no MediaBox of its own and its parent chain loops (objects 8 and 9):
    // pdf-extract looks the MediaBox up by recursion through parents.
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [4 0 R 6 0 R] /Count 2 >>".to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>".to_vec(),
        stream_object("", FACT),
        b"<< /Type /Page /Parent 8 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents 7 0 R >>".to_vec(),
        stream_object("", &showing("Page two.")),
        b"<< /Parent 9 0 R >>".to_vec(),
        b"<< /Parent 8 0 R >>".to_vec(),
    ];
    let doc = read(&assemble_pdf(&objects), &Limits::default()).unwrap();
    assert!(doc.text.contains("24 trailer bays"), "{}", doc.text);
    assert_eq!(
        doc.gaps,
        ["page 2 could not be read (the PDF reader failed on it)"]
    );
}

#[test]
fn pages_past_the_text_limit_are_read_in_part() {
    let limits = Limits {
        max_text_bytes: 200,
        ..Limits::default()
    };
    let pages: Vec<(&str, Vec<u8>)> = (1..=5)
        .map(|n| {
            (
                "",
                showing(&format!(
                    "Page {n} says the Harbor Street yard has {n}0 trailer bays."
                )),
            )
        })
        .collect();
    let doc = read(&pages_pdf(&pages), &limits).unwrap();
    assert!(
        doc.text.contains("Page 3 says") && !doc.text.contains("Page 4 says"),
        "{}",
        doc.text
    );
    assert_eq!(
        doc.gaps,
        ["pages 1–4 of 5: its text reached 200 bytes, the most one document may hold"]
    );
}

/// A value written as PDF source (what an encryption dictionary holds).
fn source(object: &Object) -> String {
    match object {
        Object::Name(name) => format!("/{}", String::from_utf8_lossy(name)),
        Object::Integer(n) => n.to_string(),
        Object::Boolean(b) => b.to_string(),
        Object::String(bytes, _) => format!(
            "<{}>",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ),
        Object::Array(items) => format!(
            "[{}]",
            items.iter().map(source).collect::<Vec<_>>().join(" ")
        ),
        Object::Dictionary(dict) => format!(
            "<<{}>>",
            dict.iter()
                .map(|(k, v)| format!(" /{} {}", String::from_utf8_lossy(k), source(v)))
                .collect::<String>()
        ),
        other => panic!("no source for {other:?}"),
    }
}

/// A PDF encrypted (RC4, 128 bits) for the empty password whose font (object 7) sits in
/// an object stream (object 5) that goes on with `spaces` spaces, found through a
/// cross-reference stream (object 6): the file lopdf loads by decrypting every object
/// and then inflating each container the cross-reference stream names.
pub(super) fn encrypted_with_object_stream(spaces: u64) -> Vec<u8> {
    let file_id = b"deepr-test-file1".to_vec();
    let mut holder = Pdf::with_version("1.5");
    let id = Object::String(file_id.clone(), pdf_extract::StringFormat::Hexadecimal);
    holder
        .trailer
        .set("ID", Object::Array(vec![id.clone(), id]));
    let version = pdf_extract::encryption::EncryptionVersion::V2 {
        document: &holder,
        owner_password: "owner",
        user_password: "",
        key_length: 128,
        permissions: pdf_extract::Permissions::all(),
    };
    let state = pdf_extract::EncryptionState::try_from(version).unwrap();
    let sealed = |n: u32, dict: &str, data: Vec<u8>| {
        let mut stream = Object::Stream(pdf_extract::Stream::new(
            pdf_extract::Dictionary::new(),
            data,
        ));
        pdf_extract::encryption::encrypt_object(&state, (n, 0), &mut stream).unwrap();
        let Object::Stream(stream) = stream else {
            unreachable!()
        };
        stream_object(dict, &stream.content)
    };
    let held = [
        &b"7 0 "[..],
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    .concat();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 7 0 R >> >> /Contents 4 0 R >>".to_vec(),
        sealed(4, "", FACT.to_vec()),
        sealed(5, "/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode", deflate_bomb(&held, spaces)),
    ];
    let mut out = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.drain(..).enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(&object);
        out.extend_from_slice(b"\nendobj\n");
    }
    let encrypt_at = out.len();
    let encrypt = source(&Object::Dictionary(state.encode().unwrap()));
    out.extend_from_slice(format!("8 0 obj\n{encrypt}\nendobj\n").as_bytes());
    let xref_at = out.len();
    let mut rows = vec![[0u8, 0, 0, 0, 0, 255, 255]];
    for offset in offsets.iter().copied().chain([xref_at]) {
        let o = u32::try_from(offset).unwrap().to_be_bytes();
        rows.push([1, o[0], o[1], o[2], o[3], 0, 0]);
    }
    rows.push([2, 0, 0, 0, 5, 0, 0]);
    let e = u32::try_from(encrypt_at).unwrap().to_be_bytes();
    rows.push([1, e[0], e[1], e[2], e[3], 0, 0]);
    let hex: String = file_id.iter().map(|b| format!("{b:02x}")).collect();
    out.extend_from_slice(b"6 0 obj\n");
    out.extend_from_slice(&stream_object(
        &format!("/Type /XRef /Size 9 /W [1 4 2] /Root 1 0 R /Encrypt 8 0 R /ID [<{hex}> <{hex}>]"),
        &rows.concat(),
    ));
    out.extend_from_slice(format!("\nendobj\nstartxref\n{xref_at}\n%%EOF\n").as_bytes());
    out
}

/// Peak memory (`VmHWM`, kB) of this process.
fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Run by [`a_pdf_that_inflates_to_gigabytes_is_read_in_little_memory`] in a process of
/// its own: reads the PDF `DEEPR_PDF_BOMB` names with the default limits and prints what
/// it read and its peak memory.
#[test]
#[ignore = "a child of a_pdf_that_inflates_to_gigabytes_is_read_in_little_memory"]
fn read_the_bomb_named_in_the_environment() {
    let path = std::env::var("DEEPR_PDF_BOMB").expect("DEEPR_PDF_BOMB names the PDF");
    let bytes = std::fs::read(path).unwrap();
    let result = read(&bytes, &Limits::default());
    println!("before-read-kb={}", peak_kb());
    match result {
        Ok(doc) => println!(
            "text-has-fact={} gaps={:?}",
            doc.text.contains("24 trailer bays"),
            doc.gaps
        ),
        Err(err) => println!("error={err}"),
    }
    println!("peak-kb={}", peak_kb());
}

/// The file, and its object-stream twins (plain and encrypted): some 10 MB of
/// PDF whose one stream inflates to 1.5 GB (before the limits, reading the first took
/// the process to 3.0 GiB). Each is read in a process of its own, whose peak memory
/// must stay under 300 MB.
#[test]
fn a_pdf_that_inflates_to_gigabytes_is_read_in_little_memory() {
    let spaces = 1536 * MB;
    let content = one_page_pdf("/Filter /FlateDecode", &deflate_bomb(FACT, spaces), "", &[]);
    let held = [
        &b"7 0 "[..],
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    .concat();
    let objstm = stream_object(
        "/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode",
        &deflate_bomb(&held, spaces),
    );
    let object_stream = one_page_pdf("", FACT, "", &[objstm]);
    let encrypted = encrypted_with_object_stream(spaces);
    let dir = std::env::temp_dir().join(format!("deepr-pdf-bomb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes, gap) in [
        (
            "content.pdf",
            content,
            "page 1: content read up to 4 MB a page",
        ),
        (
            "objstm.pdf",
            object_stream,
            "object stream 6 inflates past 64 MB",
        ),
        (
            "encrypted.pdf",
            encrypted,
            "object stream 5 inflates past 64 MB",
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "--nocapture",
                "formats::pdf::limits_tests::read_the_bomb_named_in_the_environment",
            ])
            .env("DEEPR_PDF_BOMB", &path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let peak: u64 = stdout
            .lines()
            .find_map(|l| l.strip_prefix("peak-kb="))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                panic!(
                    "{name}: no peak in {stdout} {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        eprintln!("{name} ({} MB): peak {} MB", bytes.len() >> 20, peak >> 10);
        assert!(
            stdout.contains("text-has-fact=true") && stdout.contains(gap),
            "{name}: {stdout}"
        );
        assert!(peak < 300 * 1024, "{name}: peak {peak} kB");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
