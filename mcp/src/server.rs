//! The MCP handler: tools and resources over rmcp, every call answered — a bad call is
//! a tool error (`isError`, one line saying what was wrong and what to do), never a
//! crash or an exit.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;

use crate::actions::{self, Started};
use crate::shared::Shared;
use crate::{fleet, later, tools, views};

/// The handler every connection shares.
#[derive(Clone)]
pub struct DeeprServer {
    pub shared: Arc<Shared>,
}

const INSTRUCTIONS: &str = "deepr researches a topic or brief over a document folder or the web and writes a report whose every quote is cut verbatim from a source it read. Start with estimate_cost (and plan_research to review the plan), then research (returns a run id; pass wait_s to wait with progress), follow with run_status, read with get_report / get_sources, check with verify_report; ask_followup asks a follow-up question of a finished run from what it read, refresh_run researches it again and says what changed. Runs are checkpointed: cancel_run stops one, resume_run continues it paying nothing twice.";

fn answer(result: Result<Value, String>) -> CallToolResponse {
    match result {
        Ok(value) => {
            let summary = value["summary"]
                .as_str()
                .map(str::to_string)
                .or_else(|| value["text"].as_str().map(str::to_string))
                .unwrap_or_else(|| serde_json::to_string_pretty(&value).unwrap_or_default());
            let mut result = CallToolResult::success(vec![ContentBlock::text(summary)]);
            result.structured_content = Some(value);
            result.into()
        }
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]).into(),
    }
}

impl DeeprServer {
    async fn dispatch(
        &self,
        name: &str,
        args: &JsonObject,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Value, String> {
        if self.shared.fleet.is_some() {
            return self.dispatch_fleet(name, args, ctx).await;
        }
        let shared = &self.shared;
        match name {
            "research" => {
                let started = actions::research(shared, args)?;
                Ok(self.follow_local(started, ctx).await)
            }
            "resume_run" => {
                let started = actions::resume(shared, args)?;
                Ok(self.follow_local(started, ctx).await)
            }
            "ask_followup" => {
                let started = later::ask_followup(shared, args)?;
                Ok(self.follow_local(started, ctx).await)
            }
            "refresh_run" => match later::refresh_run(shared, args)? {
                Ok(started) => Ok(self.follow_local(started, ctx).await),
                Err(unchanged) => Ok(
                    serde_json::json!({"state": "unchanged", "detail": unchanged, "summary": unchanged}),
                ),
            },
            "plan_research" => {
                let started = later::plan_research(shared, args)?;
                let run_id = started.run.run_id.clone();
                let mut status = self.follow_local(started, ctx).await;
                if let (Some(map), Some(plan)) =
                    (status.as_object_mut(), later::written_plan(shared, &run_id))
                {
                    map.insert("plan".into(), Value::String(plan));
                    map.insert("next".into(), Value::String("review or edit the plan, then pass it to research as plan (topic may be left out)".into()));
                }
                Ok(status)
            }
            "run_status" => actions::status(shared, args),
            "cancel_run" => actions::cancel(shared, args).await,
            "list_runs" => views::list_runs(shared, args),
            "get_report" => views::get_report(shared, args),
            "get_sources" => views::get_sources(shared, args),
            "search_past_research" => views::search_past_research(shared, args, None),
            "verify_report" => {
                let (shared, args) = (Arc::clone(shared), args.clone());
                tokio::task::spawn_blocking(move || views::verify_report(&shared, &args))
                    .await
                    .unwrap_or_else(|_| {
                        Err("verify_report: the check failed unexpectedly; try again".into())
                    })
            }
            other => self.dispatch_common(other, args),
        }
    }

    /// The tools that read neither runs nor the fleet, and unknown names.
    fn dispatch_common(&self, name: &str, args: &JsonObject) -> Result<Value, String> {
        match name {
            "estimate_cost" => views::estimate_cost(&self.shared, args),
            other => Err(format!(
                "unknown tool {other:?}; the tools are {}",
                tools::all()
                    .iter()
                    .map(|t| t.name.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// The run tools on a fleet: runs are queued for workers, read from the database.
    async fn dispatch_fleet(
        &self,
        name: &str,
        args: &JsonObject,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Value, String> {
        let shared = &self.shared;
        match name {
            "research" => {
                let (run_id, wait_s) = fleet::research(shared, args).await?;
                self.follow_fleet(&run_id, wait_s, ctx).await
            }
            "resume_run" => {
                let (run_id, wait_s) = fleet::resume(shared, args).await?;
                self.follow_fleet(&run_id, wait_s, ctx).await
            }
            "run_status" => {
                let args = tools::Arguments::new("run_status", args, &["run_id"])?;
                fleet::status(shared, args.run_id()?).await
            }
            "ask_followup" | "refresh_run" => Err(format!("{name}: this server queues runs on a fleet; follow-ups and refreshes run where their earlier run's documents are (deepr ask / deepr refresh, or a deepr mcp without --db)")),
            "plan_research" => Err("plan_research: this server queues runs on a fleet and plans none itself; plan with `deepr run --plan-only` (or a deepr mcp without --db), then pass the plan to research as plan".into()),
            "cancel_run" => Err("cancel_run: fleet runs are stopped by their workers (Ctrl-C or SIGTERM on `deepr worker` checkpoints them); this server cannot stop one".into()),
            "list_runs" => fleet::list_runs(shared, args).await,
            "get_report" => fleet::get_report(shared, args).await,
            "get_sources" => fleet::get_sources(shared, args).await,
            "search_past_research" => {
                views::search_past_research(shared, args, Some(fleet::memories(shared).await?))
            }
            "verify_report" => {
                let read = tools::Arguments::new("verify_report", args, &["run_id", "path"])?;
                match read.string("path")? {
                    Some(_) => views::verify_report(shared, args),
                    None => fleet::verify_run(shared, read.run_id()?).await,
                }
            }
            other => self.dispatch_common(other, args),
        }
    }

    /// Waits for a run of this server (see [`Self::follow`]).
    async fn follow_local(&self, started: Started, ctx: &RequestContext<RoleServer>) -> Value {
        let Started { run, wait_s } = started;
        let watched = Arc::clone(&run);
        self.follow(wait_s, ctx, move || {
            let run = Arc::clone(&watched);
            async move {
                let (steps, tokens, stage, judged) = run
                    .live
                    .lock()
                    .map(|live| {
                        (
                            live.steps(),
                            live.tokens_so_far,
                            live.last_stage.clone(),
                            live.sections_judged,
                        )
                    })
                    .unwrap_or_default();
                Watch {
                    ended: run.ended().is_some(),
                    done: steps.0,
                    planned: steps.1,
                    tokens,
                    said: format!(
                        "{} done; {} sections judged",
                        stage.as_deref().unwrap_or("nothing yet"),
                        judged
                    ),
                }
            }
        })
        .await;
        let mut status = actions::status_of(&self.shared, &run.run_id);
        with_summary(&mut status);
        status
    }

    /// Waits for a fleet run, then its status.
    async fn follow_fleet(
        &self,
        run_id: &str,
        wait_s: f64,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Value, String> {
        let (shared, id) = (Arc::clone(&self.shared), run_id.to_string());
        self.follow(wait_s, ctx, move || {
            let (shared, id) = (Arc::clone(&shared), id.clone());
            async move {
                let (ended, done) = fleet::progress(&shared, &id).await;
                Watch {
                    ended,
                    done,
                    planned: 0,
                    tokens: 0,
                    said: "in the fleet".to_string(),
                }
            }
        })
        .await;
        let mut status = fleet::status(&self.shared, run_id).await?;
        with_summary(&mut status);
        Ok(status)
    }

    /// Waits up to `wait_s` for a run to end, sending progress notifications (steps
    /// finished of steps planned, tokens so far) when the client asked for them.
    async fn follow<F, W>(&self, wait_s: f64, ctx: &RequestContext<RoleServer>, mut watch: F)
    where
        F: FnMut() -> W,
        W: std::future::Future<Output = Watch>,
    {
        let token = ctx.meta.get_progress_token();
        let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(wait_s);
        let mut last = None;
        while tokio::time::Instant::now() < deadline {
            let now = watch().await;
            if now.ended {
                break;
            }
            if let Some(token) = token
                .as_ref()
                .filter(|_| last != Some((now.done, now.tokens)))
            {
                last = Some((now.done, now.tokens));
                let progress = ProgressNotificationParam::new(token.clone(), now.done as f64)
                    .with_total(now.planned.max(now.done) as f64)
                    .with_message(format!(
                        "{} of {} steps, {} tokens so far; {}",
                        now.done, now.planned, now.tokens, now.said
                    ));
                // A client that went away stops the notifications, not the run.
                let sent = tokio::time::timeout(
                    Duration::from_secs(2),
                    ctx.peer.notify_progress(progress),
                )
                .await;
                if !matches!(sent, Ok(Ok(()))) {
                    break;
                }
            }
            tokio::select! {
                () = ctx.ct.cancelled() => break,
                () = tokio::time::sleep(fleet::POLL.min(Duration::from_millis(250))) => {}
            }
        }
    }
}

/// What a waiting call sees of its run.
struct Watch {
    ended: bool,
    done: u64,
    planned: u64,
    tokens: u64,
    /// The last stage that finished a step, and how many sections are judged.
    said: String,
}

/// A status's one-line text: the run, its state and what to do.
fn with_summary(status: &mut Value) {
    let summary = format!(
        "run {}: {} — {}",
        status["run_id"].as_str().unwrap_or("?"),
        status["state"].as_str().unwrap_or("?"),
        status["detail"].as_str().unwrap_or("")
    );
    status["summary"] = Value::String(summary);
}

impl ServerHandler for DeeprServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("deepr", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        use futures::FutureExt;
        let args = request.arguments.unwrap_or_default();
        let name = request.name.as_ref();
        // A bug in one call is that call's error, never a client left waiting.
        let dispatched = std::panic::AssertUnwindSafe(self.dispatch(name, &args, &ctx))
            .catch_unwind()
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "{name}: the call failed unexpectedly (a bug in deepr; the server still serves) — try again, or report it"
                ))
            });
        Ok(answer(dispatched))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let listed = match self.shared.fleet.is_some() {
            true => fleet::resources(&self.shared).await,
            false => views::resources(&self.shared),
        };
        let resources = listed
            .into_iter()
            .map(|(uri, name, mime)| Resource::new(uri, name).with_mime_type(mime))
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let read = match self.shared.fleet.is_some() {
            true => match views::resource_name(&request.uri) {
                Ok((run_id, file)) => fleet::read_resource(&self.shared, run_id, file).await,
                Err(message) => Err(message),
            },
            false => views::read_resource(&self.shared, &request.uri),
        };
        match read {
            Ok((text, mime)) => {
                Ok(ReadResourceResult::new(vec![
                    ResourceContents::text(text, request.uri.clone()).with_mime_type(mime)
                ])
                .into())
            }
            Err(message) => Err(McpError::resource_not_found(message, None)),
        }
    }
}
