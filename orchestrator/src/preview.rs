//! The preview of a resume: for every node, whether it is restored, recomputed (and
//! why, in words: which key material changed, which upstream node) or run.

use serde_json::Value;

/// What a resume would do with one node (preview mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreviewAction {
    /// The checkpoint matches: restored for free.
    Restore,
    /// A checkpoint exists but its inputs changed: recomputed, for this reason.
    Recompute(String),
    /// Never finished: runs for the first time.
    Run,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviewStep {
    pub node: String,
    pub stage: String,
    pub action: PreviewAction,
}

/// Why a node's key changed: which part of its own key material differs, or which
/// upstream nodes recompute.
pub fn explain_drift(old: &Value, new: &Value, changed_upstream: &[String]) -> String {
    let mut reasons = Vec::new();
    if let (Some(old), Some(new)) = (old.as_object(), new.as_object()) {
        let mut fields: Vec<&String> = old.keys().chain(new.keys()).collect();
        fields.sort();
        fields.dedup();
        for field in fields {
            let (a, b) = (old.get(field), new.get(field));
            if a == b {
                continue;
            }
            let reason = match field.as_str() {
                "llm" => {
                    let part = |v: Option<&Value>, k: &str| {
                        v.and_then(|v| v.get(k)).cloned().unwrap_or(Value::Null)
                    };
                    if part(a, "model") != part(b, "model") {
                        format!(
                            "model changed ({} → {})",
                            part(a, "model"),
                            part(b, "model")
                        )
                    } else {
                        format!(
                            "prompt {} changed",
                            part(b, "prompt").as_str().unwrap_or("?")
                        )
                    }
                }
                "v" => format!(
                    "stage code version changed ({} → {})",
                    a.cloned().unwrap_or(Value::Null),
                    b.cloned().unwrap_or(Value::Null)
                ),
                other => format!("setting {other} changed"),
            };
            reasons.push(reason);
        }
    } else if old != new {
        reasons.push("its inputs changed".to_string());
    }
    if reasons.is_empty() {
        if changed_upstream.is_empty() {
            reasons.push("upstream inputs changed".to_string());
        } else {
            reasons.push(format!(
                "upstream {} recompute(s)",
                changed_upstream.join(", ")
            ));
        }
    }
    reasons.join("; ")
}
