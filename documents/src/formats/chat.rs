//! Chat exports: a Slack workspace export (`.zip`: `users.json`, `channels.json`, a
//! folder of day files per channel) and a Mattermost bulk export (JSONL: `user`,
//! `channel`, `post` and `direct_post` lines, replies inside their post). A channel's
//! day is a document (`general/2026-03-04`, titled `#general, 2026-03-04`, dated that
//! day); each message is one unit ([`Document::units`]: quoted whole, never cut at a
//! sentence boundary) under a heading naming its speaker — resolved from the users
//! list — and its time (`Dana Ruiz, 09:12`), so who said it is in the heading path
//! and never in a quote. Joins, leaves, channel-topic changes and bot messages are
//! dropped; a message with no text (a file share alone) says so as a gap.

use std::collections::BTreeMap;

use serde_json::Value;

use super::zipped::Container;
use super::Part;
use crate::dates::metadata_date;
use crate::{Builder, DocStatus, Document, Format, Limits, ReadError};

/// Most channel-days read from one export; the rest are listed as not read.
pub const MAX_CHANNEL_DAYS: usize = 20_000;

/// One message as both exports give it.
#[derive(Debug, Clone, PartialEq)]
struct ChatMessage {
    speaker: String,
    /// Seconds since the Unix epoch (UTC).
    seconds: i64,
    text: String,
}

/// A Slack workspace export.
pub(super) fn read_slack(bytes: &[u8], limits: &Limits) -> Result<Vec<Part>, ReadError> {
    let mut zip = Container::open(bytes, Format::Slack, limits)?;
    let names = zip.names();
    let channels_json = zip.read_text("channels.json")?.ok_or_else(|| {
        ReadError::Unsupported(
            " (a .zip that is not a Slack export: no channels.json; unzip it to read the files it holds)"
                .into(),
        )
    })?;
    let users = zip
        .read_text("users.json")?
        .map(|text| slack_users(&text))
        .transpose()?
        .unwrap_or_default();
    let channels = json_array(&channels_json, "channels.json")?;
    let mut days: Vec<(String, Vec<ChatMessage>)> = Vec::new();
    for channel in channels.iter().filter_map(|c| c.get("name")?.as_str()) {
        let prefix = format!("{channel}/");
        let mut day_files: Vec<&String> = names
            .iter()
            .filter(|n| n.starts_with(&prefix) && n.ends_with(".json"))
            .collect();
        day_files.sort();
        for file in day_files {
            let Some(text) = zip.read_text(file)? else {
                continue;
            };
            let messages = json_array(&text, file)?
                .iter()
                .filter_map(|m| slack_message(m, &users))
                .collect();
            let day = file.trim_end_matches(".json").to_string();
            days.push((day, messages));
        }
    }
    Ok(channel_days(days, limits))
}

/// Slack's users: id → the name people know them by.
fn slack_users(text: &str) -> Result<BTreeMap<String, String>, ReadError> {
    let mut users = BTreeMap::new();
    for user in json_array(text, "users.json")? {
        let Some(id) = user.get("id").and_then(Value::as_str) else {
            continue;
        };
        let profile = user.get("profile");
        let name = [
            user.get("real_name"),
            profile.and_then(|p| p.get("real_name")),
            profile.and_then(|p| p.get("display_name")),
            user.get("name"),
        ]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|n| !n.trim().is_empty())
        .unwrap_or(id);
        users.insert(id.to_string(), name.trim().to_string());
    }
    Ok(users)
}

/// Subtypes that are not something someone said.
const NOISE_SUBTYPES: &[&str] = &[
    "channel_join",
    "channel_leave",
    "channel_topic",
    "channel_purpose",
    "channel_name",
    "channel_archive",
    "channel_unarchive",
    "group_join",
    "group_leave",
    "bot_message",
    "bot_add",
    "bot_remove",
    "pinned_item",
    "reminder_add",
    "tombstone",
];

/// A Slack message someone wrote, with mentions resolved; `None` for noise.
fn slack_message(message: &Value, users: &BTreeMap<String, String>) -> Option<ChatMessage> {
    let subtype = message.get("subtype").and_then(Value::as_str).unwrap_or("");
    if NOISE_SUBTYPES.contains(&subtype) || message.get("bot_id").is_some() {
        return None;
    }
    let user = message.get("user").and_then(Value::as_str).unwrap_or("");
    let speaker = users
        .get(user)
        .cloned()
        .or_else(|| {
            let profile = message.get("user_profile")?;
            profile
                .get("real_name")
                .or(profile.get("display_name"))?
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_else(|| user.to_string());
    let seconds = message
        .get("ts")
        .and_then(Value::as_str)
        .and_then(|ts| ts.split('.').next()?.parse().ok())
        .unwrap_or(0);
    let text = slack_text(message.get("text").and_then(Value::as_str)?, users);
    Some(ChatMessage {
        speaker,
        seconds,
        text,
    })
}

/// Slack's markup read as text: `<@U123>` → `@Dana Ruiz`, `<https://x|label>` →
/// `label`, `<#C1|general>` → `#general`, and its three HTML entities.
fn slack_text(text: &str, users: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('>') else {
            rest = &rest[open..];
            break;
        };
        let inner = &rest[open + 1..open + close];
        let (target, label) = inner.split_once('|').unwrap_or((inner, ""));
        if let Some(id) = target.strip_prefix('@') {
            out.push('@');
            out.push_str(users.get(id).map_or(id, String::as_str));
        } else if target.starts_with('#') && !label.is_empty() {
            out.push('#');
            out.push_str(label);
        } else if !label.is_empty() {
            out.push_str(label);
        } else {
            out.push_str(target.trim_start_matches('!'));
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A Mattermost bulk export.
pub(super) fn read_mattermost(text: &str, limits: &Limits) -> Result<Vec<Part>, ReadError> {
    let mut users: BTreeMap<String, String> = BTreeMap::new();
    let mut posts: Vec<(String, ChatMessage)> = Vec::new();
    let mut saw_version = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).map_err(|e| {
            ReadError::malformed(Format::Mattermost, format!("line {}: {e}", n + 1))
        })?;
        match value.get("type").and_then(Value::as_str).unwrap_or("") {
            "version" => saw_version = true,
            "user" => {
                if let Some((username, name)) = value.get("user").and_then(mattermost_user) {
                    users.insert(username, name);
                }
            }
            "post" | "direct_post" => mattermost_posts(&value, &mut posts),
            _ => {}
        }
    }
    if !saw_version {
        return Err(ReadError::Unsupported(
            " (a .jsonl file that is not a Mattermost bulk export: no \"version\" line)".into(),
        ));
    }
    for (_, message) in &mut posts {
        if let Some(name) = users.get(&message.speaker) {
            message.speaker = name.clone();
        }
    }
    let mut by_channel: BTreeMap<String, Vec<ChatMessage>> = BTreeMap::new();
    for (channel, message) in posts {
        by_channel.entry(channel).or_default().push(message);
    }
    let mut days = Vec::new();
    for (channel, mut messages) in by_channel {
        messages.sort_by_key(|m| m.seconds);
        let mut current: Option<(String, Vec<ChatMessage>)> = None;
        for message in messages {
            let day = format!("{channel}/{}", civil_date(message.seconds));
            match &mut current {
                Some((d, list)) if *d == day => list.push(message),
                _ => {
                    days.extend(current.take());
                    current = Some((day, vec![message]));
                }
            }
        }
        days.extend(current);
    }
    Ok(channel_days(days, limits))
}

/// A Mattermost user: (username, "First Last" or the nickname or the username).
fn mattermost_user(user: &Value) -> Option<(String, String)> {
    let username = user.get("username")?.as_str()?.to_string();
    let field = |k: &str| user.get(k).and_then(Value::as_str).unwrap_or("").trim();
    let full = format!("{} {}", field("first_name"), field("last_name"));
    let name = [full.trim(), field("nickname")]
        .into_iter()
        .find(|n| !n.is_empty())
        .unwrap_or(&username)
        .to_string();
    Some((username, name))
}

/// A post and its replies as (channel, message); a direct post's channel is its
/// members.
fn mattermost_posts(value: &Value, posts: &mut Vec<(String, ChatMessage)>) {
    let post = value.get("post").or_else(|| value.get("direct_post"));
    let Some(post) = post else { return };
    let channel = match post.get("channel").and_then(Value::as_str) {
        Some(channel) => channel.to_string(),
        None => {
            let members: Vec<&str> = post
                .get("channel_members")
                .and_then(Value::as_array)
                .map(|m| m.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            format!("direct-{}", members.join("-"))
        }
    };
    let one = |p: &Value| -> Option<ChatMessage> {
        let text = p.get("message")?.as_str()?.to_string();
        Some(ChatMessage {
            speaker: p.get("user")?.as_str()?.to_string(),
            seconds: p.get("create_at")?.as_i64()? / 1000,
            text,
        })
    };
    posts.extend(one(post).map(|m| (channel.clone(), m)));
    for reply in post
        .get("replies")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        posts.extend(one(reply).map(|m| (channel.clone(), m)));
    }
}

/// Each channel-day as a part, in order, within the limit of channel-days.
fn channel_days(days: Vec<(String, Vec<ChatMessage>)>, limits: &Limits) -> Vec<Part> {
    let total = days.len();
    let mut parts = Vec::new();
    for (n, (name, messages)) in days.into_iter().enumerate() {
        if n == MAX_CHANNEL_DAYS {
            parts.push(Part {
                name,
                read: Err(ReadError::TooComplex(format!(
                    "this and {} more channel-days past the limit of {MAX_CHANNEL_DAYS} an export",
                    total - MAX_CHANNEL_DAYS - 1
                ))),
            });
            break;
        }
        let read = channel_day(&name, &messages, limits);
        parts.push(Part { name, read });
    }
    parts
}

/// One channel's day: a heading per message (its speaker and time) and the message as
/// one unit.
fn channel_day(
    name: &str,
    messages: &[ChatMessage],
    limits: &Limits,
) -> Result<Document, ReadError> {
    let (channel, day) = name.rsplit_once('/').unwrap_or((name, ""));
    let mut builder = Builder::new(*limits);
    let title = format!("#{channel}, {day}");
    builder.title(&title);
    builder.heading(1, &title)?;
    let mut empty = 0;
    for message in messages {
        if message.text.trim().is_empty() {
            empty += 1;
            continue;
        }
        let time = clock_time(message.seconds);
        builder.byline(2, &format!("{}, {time}", message.speaker))?;
        builder.unit(&message.text)?;
    }
    if empty > 0 {
        builder.gap(format!(
            "{empty} messages with no text (a file or image alone)"
        ));
    }
    builder.finish(metadata_date(day), DocStatus::Current)
}

/// A JSON array, or why the file is not one.
fn json_array(text: &str, file: &str) -> Result<Vec<Value>, ReadError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => Ok(items),
        Ok(_) => Err(ReadError::malformed(
            Format::Slack,
            format!("{file} is not a JSON array"),
        )),
        Err(e) => Err(ReadError::malformed(Format::Slack, format!("{file}: {e}"))),
    }
}

/// `YYYY-MM-DD` (UTC) of a Unix time, by the civil-from-days algorithm.
fn civil_date(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `HH:MM` (UTC) of a Unix time.
fn clock_time(seconds: i64) -> String {
    let in_day = seconds.rem_euclid(86_400);
    format!("{:02}:{:02}", in_day / 3_600, in_day % 3_600 / 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_times_read_as_utc_dates_and_times() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(1_772_615_520), "2026-03-04");
        assert_eq!(clock_time(1_772_615_520), "09:12");
        assert_eq!(civil_date(951_782_400), "2000-02-29");
    }

    #[test]
    fn slack_markup_reads_as_text() {
        let users = BTreeMap::from([("U1".to_string(), "Dana Ruiz".to_string())]);
        assert_eq!(
            slack_text(
                "<@U1> see <https://x.example/p|the plan> in <#C1|ops> &amp; <!here>",
                &users
            ),
            "@Dana Ruiz see the plan in #ops & here"
        );
    }

    #[test]
    fn a_mattermost_export_is_read_by_channel_and_day_with_names() {
        let jsonl = [
            r#"{"type":"version","version":1}"#,
            r#"{"type":"user","user":{"username":"dana","first_name":"Dana","last_name":"Ruiz"}}"#,
            r#"{"type":"post","post":{"team":"ops","channel":"yard","user":"dana","message":"Harbor Street wins. It has 24 trailer bays vs 18 at Pier 9.","create_at":1772615520000,"replies":[{"user":"sam","message":"Agreed.","create_at":1772615580000}]}}"#,
        ]
        .join("\n");
        let parts = read_mattermost(&jsonl, &Limits::default()).unwrap();
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].name, "yard/2026-03-04");
        let doc = parts[0].read.as_ref().unwrap();
        assert_eq!(doc.title, "#yard, 2026-03-04");
        assert_eq!(doc.date.as_deref(), Some("2026-03-04"));
        let message = "Harbor Street wins. It has 24 trailer bays vs 18 at Pier 9.";
        let at = doc.text.find(message).unwrap();
        assert!(
            doc.units.contains(&(at, at + message.len())),
            "{:?}",
            doc.units
        );
        assert!(doc.text.contains("Dana Ruiz, 09:12"));
        assert!(doc.text.contains("sam, 09:13"));
        assert!(read_mattermost("{\"type\":\"post\"}", &Limits::default()).is_err());
    }

    #[test]
    fn a_slack_export_is_read_by_channel_and_day_without_joins_or_bots() {
        let files = [
            (
                "users.json",
                r#"[{"id":"U1","name":"dana","real_name":"Dana Ruiz"},{"id":"U2","name":"sam","profile":{"real_name":"Sam Lee"}}]"#,
            ),
            ("channels.json", r#"[{"id":"C1","name":"yard"}]"#),
            (
                "yard/2026-03-04.json",
                r#"[{"type":"message","subtype":"channel_join","user":"U2","text":"<@U2> has joined the channel","ts":"1772615400.000100"},{"type":"message","user":"U1","text":"Harbor Street wins. It has 24 bays vs 18 at Pier 9, <@U2>.","ts":"1772615520.000200"},{"type":"message","bot_id":"B1","text":"Reminder: standup","ts":"1772615530.000300"}]"#,
            ),
        ];
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        let zip = crate::writers::zip(&files).unwrap();
        let parts = read_slack(&zip, &Limits::default()).unwrap();
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].name, "yard/2026-03-04");
        let doc = parts[0].read.as_ref().unwrap();
        let message = "Harbor Street wins. It has 24 bays vs 18 at Pier 9, @Sam Lee.";
        let at = doc.text.find(message).expect(&doc.text);
        assert!(doc.units.contains(&(at, at + message.len())));
        assert!(doc.text.contains("Dana Ruiz, 09:12"));
        assert!(
            !doc.text.contains("joined") && !doc.text.contains("standup"),
            "{}",
            doc.text
        );
        let not_slack =
            crate::writers::zip(&[("notes.txt".to_string(), "hi".to_string())]).unwrap();
        assert!(matches!(
            read_slack(&not_slack, &Limits::default()),
            Err(ReadError::Unsupported(_))
        ));
    }
}
