//! Plain text that carries mail or chat: a dump of emails whose blocks open with
//! header lines (`From:`, `To:`, `Date:`, `Subject:`, `Email ID:` …), or a chat
//! transcript of `[time] name: message` lines. Header lines are metadata, never
//! evidence: a message's headers become one heading above its body (`Budget sign-off
//! — Dana Ruiz, 2026-03-04`), a chat line's speaker and time a heading above its
//! message, and the message one unit ([`crate::Document::units`]). Separator lines
//! (`====`, `----`) are dropped. Anything else reads as plain text.

use super::text::blocks_of_lines;
use crate::{Builder, ReadError};

/// Header names that open an email in a text dump.
const HEADER_NAMES: &[&str] = &[
    "from",
    "to",
    "cc",
    "bcc",
    "date",
    "sent",
    "subject",
    "email id",
    "message id",
    "message-id",
    "reply-to",
    "thread",
    "channel",
];

/// Whether `text` reads as mail or chat: an email header group (two header lines in a
/// row, one of them `From:` or `Subject:`), or three chat lines.
pub(super) fn carries_mail_or_chat(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().take(2_000).collect();
    let header_group = lines.windows(2).any(|pair| {
        let names: Vec<String> = pair
            .iter()
            .filter_map(|l| header(l).map(|(n, _)| n))
            .collect();
        names.len() == 2 && names.iter().any(|n| n == "from" || n == "subject")
    });
    header_group || lines.iter().filter(|l| chat_line(l).is_some()).count() >= 3
}

/// `Name: value` when the name is an email header's.
fn header(line: &str) -> Option<(String, &str)> {
    let (name, value) = line.split_once(':')?;
    let name = name.trim().to_lowercase();
    HEADER_NAMES
        .contains(&name.as_str())
        .then(|| (name, value.trim()))
}

/// `[10:42] Dana Ruiz: message` (or `[2026-03-04 10:42] …`, `[Unknown time] …`):
/// (time, speaker, message).
fn chat_line(line: &str) -> Option<(&str, &str, &str)> {
    let rest = line.trim_start().strip_prefix('[')?;
    let (time, rest) = rest.split_once(']')?;
    let (speaker, message) = rest.split_once(':')?;
    let speaker = speaker.trim();
    let plausible = (1..=40).contains(&time.chars().count())
        && (1..=60).contains(&speaker.chars().count())
        && !speaker.contains(['[', ']'])
        && !message.trim().is_empty();
    plausible.then(|| (time.trim(), speaker, message.trim()))
}

/// A line of only `=`, `-`, `_`, `*` or `#` (three or more): a separator.
fn is_separator(line: &str) -> bool {
    let line = line.trim();
    line.chars().count() >= 3
        && line
            .chars()
            .all(|c| matches!(c, '=' | '-' | '_' | '*' | '#'))
}

/// A text that carries mail or chat, as a document.
pub(super) fn read(text: &str, limits: &crate::Limits) -> Result<crate::Document, ReadError> {
    let mut builder = Builder::new(*limits);
    blocks(&mut builder, text)?;
    builder.finish(None, crate::DocStatus::Current)
}

/// The blocks of a text that carries mail or chat.
pub(super) fn blocks(builder: &mut Builder, text: &str) -> Result<(), ReadError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut plain = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_separator(line) {
            i += 1;
            continue;
        }
        if let Some((time, speaker, message)) = chat_line(line) {
            flush(builder, &mut plain)?;
            builder.byline(2, &format!("{speaker}, {time}"))?;
            builder.unit(message)?;
            i += 1;
            continue;
        }
        let group = header_group(&lines[i..]);
        if group > 0 {
            flush(builder, &mut plain)?;
            builder.heading(2, &message_heading(&lines[i..i + group]))?;
            i += group;
            continue;
        }
        plain.push_str(line);
        plain.push('\n');
        i += 1;
    }
    flush(builder, &mut plain)
}

/// How many header lines open `lines` (0 unless at least two, one `From:` or
/// `Subject:`).
fn header_group(lines: &[&str]) -> usize {
    let names: Vec<String> = lines
        .iter()
        .map_while(|l| header(l).map(|(n, _)| n))
        .collect();
    let opens = names.len() >= 2 && names.iter().any(|n| n == "from" || n == "subject");
    if opens {
        names.len()
    } else {
        0
    }
}

/// A message's headers as one heading: `Subject — From, Date` (whichever it has).
fn message_heading(headers: &[&str]) -> String {
    let value = |wanted: &[&str]| {
        headers
            .iter()
            .filter_map(|l| header(l))
            .find(|(n, v)| wanted.contains(&n.as_str()) && !v.is_empty())
            .map(|(_, v)| v.to_string())
    };
    let subject = value(&["subject"]);
    let byline: Vec<String> = [value(&["from"]), value(&["date", "sent"])]
        .into_iter()
        .flatten()
        .collect();
    let heading = match (subject, byline.is_empty()) {
        (Some(subject), false) => format!("{subject} — {}", byline.join(", ")),
        (Some(subject), true) => subject,
        (None, _) => byline.join(", "),
    };
    heading.trim_end_matches(['.', '!', '?']).to_string()
}

fn flush(builder: &mut Builder, plain: &mut String) -> Result<(), ReadError> {
    if !plain.trim().is_empty() {
        blocks_of_lines(builder, plain)?;
    }
    plain.clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DocStatus, Limits};

    fn read(text: &str) -> crate::Document {
        let mut builder = Builder::new(Limits::default());
        blocks(&mut builder, text).unwrap();
        builder.finish(None, DocStatus::Current).unwrap()
    }

    #[test]
    fn an_email_dump_keeps_its_headers_out_of_the_evidence() {
        let text = "Email ID: email_001\nDate: 2026-03-04\nFrom: Dana Ruiz\nSubject: Yard lease\n\nWe signed the Harbor Street lease at €18,500 a month.\n\n====\nEmail ID: email_002\nFrom: Sam Lee\nSubject: Re: Yard lease\n\nGood, Pier 9 was €21,000.";
        assert!(carries_mail_or_chat(text));
        let doc = read(text);
        let heading = "Yard lease — Dana Ruiz, 2026-03-04";
        let at = doc.text.find(heading).expect(&doc.text);
        assert!(doc.marks.iter().any(|m| m.at == at && m.heading == Some(2)));
        assert!(!doc.text.contains("Email ID"));
        assert!(!doc.text.contains("===="));
        let body = doc.text.find("We signed").unwrap();
        assert_eq!(doc.heading_path(body), [heading]);
    }

    #[test]
    fn a_chat_transcript_is_a_unit_a_message() {
        let text = "MESSAGES:\n====\n[Unknown time] Dana Ruiz: Harbor Street has 24 bays. Pier 9 has 18.\n[10:42] Sam Lee: Then Harbor Street.\n[10:43] Dana Ruiz: Agreed, I will sign today.";
        assert!(carries_mail_or_chat(text));
        let doc = read(text);
        let message = "Harbor Street has 24 bays. Pier 9 has 18.";
        let at = doc.text.find(message).unwrap();
        assert!(doc.units.contains(&(at, at + message.len())));
        assert_eq!(
            doc.heading_path(at).last().unwrap(),
            "Dana Ruiz, Unknown time"
        );
        assert!(!carries_mail_or_chat(
            "Notes\n\nFrom: the plan, we build.\nWe grow."
        ));
    }
}
