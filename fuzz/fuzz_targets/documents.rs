//! Binary documents (PDF, and the zip formats: DOCX, PPTX, XLSX, ODS, ODT, ODP, EPUB)
//! → a document (deepr-documents) on any bytes: an error or a document, never a panic,
//! within small limits. The seed corpus is empty, so libFuzzer finds the zip and PDF
//! headers itself; longer runs by hand reach deeper.
#![no_main]

use deepr_documents::{read, Format, Limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits::tight();
    let formats = [
        Format::Pdf,
        Format::Docx,
        Format::Pptx,
        Format::Xlsx,
        Format::Ods,
        Format::Odt,
        Format::Odp,
        Format::Epub,
    ];
    for format in formats {
        let _ = read(data, format, &limits);
    }
});
