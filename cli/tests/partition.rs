//! A fleet worker cut off from PostgreSQL mid-run, as a worker on a second machine is
//! when its network fails: two workers, each in its own network namespace (`ip netns`),
//! reach the database over a veth pair through a forwarder on the host; worker A's link
//! is cut while it holds runs. Its leases expire, worker B finishes every run, the
//! reports are the local runs' to the byte, the calls paid twice are at most those A had
//! in flight (counted and printed), and when A's link comes back A learns it lost its
//! leases and writes nothing over the finished runs. Needs root and PostgreSQL: skipped
//! without them, required under `CI=true`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use common::fleet::{
    cell_args, count, psql, same_as_local, submit, wait_all_finished, wait_for, Database,
};
use common::{deepr, fixture_corpus, stderr};

/// Steps each run executes at once, and calls each step keeps in flight: what a worker
/// may have paid for and not checkpointed when its link goes, per run.
const STEPS: usize = 4;
const CALLS_PER_STEP: usize = 2;

/// `ip ARGS…`; its error output when it fails.
fn ip(args: &[&str]) -> Result<(), String> {
    let output = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// A network namespace joined to the host by a veth pair: the host's end is
/// `10.213.<n>.1`, the namespace's `10.213.<n>.2`. Removed when dropped.
struct Machine {
    namespace: String,
    host_link: String,
    host_address: String,
}

impl Machine {
    fn create(n: u8) -> Result<Self, String> {
        let tag = format!("{}{n}", std::process::id() % 100_000);
        let machine = Self {
            namespace: format!("deepr-part-{tag}"),
            host_link: format!("dph{tag}"),
            host_address: format!("10.213.{n}.1"),
        };
        let inner = format!("dpn{tag}");
        let ns = machine.namespace.as_str();
        ip(&["netns", "add", ns])?;
        ip(&[
            "link",
            "add",
            &machine.host_link,
            "type",
            "veth",
            "peer",
            "name",
            &inner,
        ])?;
        ip(&["link", "set", &inner, "netns", ns])?;
        ip(&[
            "addr",
            "add",
            &format!("{}/30", machine.host_address),
            "dev",
            &machine.host_link,
        ])?;
        ip(&["link", "set", &machine.host_link, "up"])?;
        ip(&[
            "netns",
            "exec",
            ns,
            "ip",
            "addr",
            "add",
            &format!("10.213.{n}.2/30"),
            "dev",
            &inner,
        ])?;
        ip(&["netns", "exec", ns, "ip", "link", "set", &inner, "up"])?;
        ip(&["netns", "exec", ns, "ip", "link", "set", "lo", "up"])?;
        Ok(machine)
    }

    /// Cut (`false`) or restore (`true`) the machine's only link.
    fn link(&self, up: bool) {
        let state = if up { "up" } else { "down" };
        ip(&["link", "set", &self.host_link, state]).expect("set the link");
    }

    /// A `deepr worker` inside the namespace, reaching the database through the
    /// forwarder at `port` on the host's end of the link.
    fn worker(&self, home: &Path, db: &Database, port: u16) -> Worker {
        let (user, _) = server();
        let url = format!("postgres://{user}@{}:{port}/{}", self.host_address, db.name);
        let state = home.join(&self.namespace);
        let inner = common::fleet::worker_command(home, &state, &url, "5");
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &self.namespace])
            .arg(inner.get_program())
            .args(inner.get_args())
            .current_dir(home)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (key, value) in inner.get_envs() {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        Worker::start(command.spawn().expect("start a worker in its namespace"))
    }
}

/// A worker process and what it has written to stderr so far (read by a thread); killed
/// when dropped, so a failed assertion leaves none behind.
struct Worker {
    child: Child,
    said: Arc<Mutex<String>>,
}

impl Worker {
    fn start(mut child: Child) -> Self {
        let said = Arc::new(Mutex::new(String::new()));
        if let Some(mut pipe) = child.stderr.take() {
            let said = Arc::clone(&said);
            std::thread::spawn(move || {
                let mut buffer = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buffer) {
                    if n == 0 {
                        break;
                    }
                    let text = String::from_utf8_lossy(&buffer[..n]).into_owned();
                    said.lock().expect("stderr").push_str(&text);
                }
            });
        }
        Self { child, said }
    }

    fn said(&self) -> String {
        self.said.lock().expect("stderr").clone()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.namespace]);
        let _ = ip(&["link", "del", &self.host_link]);
    }
}

/// The test server's user part and address (`postgres` and `127.0.0.1:5432` from
/// `postgres://postgres@127.0.0.1:5432/postgres`, the default of `DEEPR_TEST_PG`).
fn server() -> (String, String) {
    let url = common::fleet::admin_url();
    let rest = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
    let (user, rest) = rest.split_once('@').unwrap_or(("postgres", rest));
    let address = rest.split(['/', '?']).next().unwrap_or(rest);
    let address = if address.contains(':') {
        address.to_string()
    } else {
        format!("{address}:5432")
    };
    (user.to_string(), address)
}

/// A TCP forwarder on the host, on every address, to the test's PostgreSQL (which may
/// listen on 127.0.0.1 only): each connection is pumped both ways by two threads.
fn forward_to_postgres() -> u16 {
    let listener = TcpListener::bind("0.0.0.0:0").expect("bind the forwarder");
    let port = listener.local_addr().expect("address").port();
    let (_, address) = server();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(&address) else {
                continue;
            };
            for (mut from, mut to) in [
                (client.try_clone(), server.try_clone()),
                (server.try_clone(), client.try_clone()),
            ]
            .into_iter()
            .filter_map(|(a, b)| Some((a.ok()?, b.ok()?)))
            {
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 16 * 1024];
                    while let Ok(n) = from.read(&mut buffer) {
                        if n == 0 || to.write_all(&buffer[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = to.shutdown(Shutdown::Write);
                });
            }
        }
    });
    port
}

/// Removes the machines a killed earlier run of this test left behind: their host
/// links hold the same addresses, and a worker's packets would take the dead link.
fn remove_stale_machines() {
    let Ok(listed) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    let alive = |pid: u32| {
        std::fs::read_dir("/proc").is_ok_and(|entries| {
            entries.flatten().any(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.parse::<u32>().ok())
                    .is_some_and(|p| p % 100_000 == pid && p != std::process::id())
            })
        })
    };
    for line in String::from_utf8_lossy(&listed.stdout).lines() {
        let Some(tag) = line
            .split_whitespace()
            .next()
            .and_then(|ns| ns.strip_prefix("deepr-part-"))
        else {
            continue;
        };
        let pid = tag
            .get(..tag.len().saturating_sub(1))
            .and_then(|p| p.parse().ok());
        if pid.is_some_and(|pid| !alive(pid)) {
            let _ = ip(&["link", "del", &format!("dph{tag}")]);
            let _ = ip(&["netns", "del", &format!("deepr-part-{tag}")]);
        }
    }
}

/// Two "machines", or `None` (a skip) where this test may not make them — only
/// outside CI.
fn two_machines() -> Option<(Machine, Machine)> {
    remove_stale_machines();
    match Machine::create(1).and_then(|a| Ok((a, Machine::create(2)?))) {
        Ok(machines) => Some(machines),
        Err(error) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true but network namespaces cannot be made (root and iproute2 are needed): {error}"
            );
            eprintln!("skipped: network namespaces cannot be made here: {error}");
            None
        }
    }
}

const TOPICS: [&str; 4] = [
    "What page size does the storage engine use?",
    "How does the journal make commits durable?",
    "What does the write-ahead log change?",
    "When is the rollback journal synced to disk?",
];

/// Every node checkpoint with the transaction that wrote it (`xmin`): a rewrite, even
/// of the same bytes, shows.
const NODES: &str = "SELECT string_agg(run_id || ' ' || node_id || ' ' || xmin::text, ',' ORDER BY run_id, node_id) FROM deepr_nodes";
const REPORTS: &str =
    "SELECT string_agg(run_id || ' ' || md5(reports::text), ',' ORDER BY run_id) FROM deepr_runs";

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, step by step
fn a_worker_cut_off_from_the_database_loses_its_runs_and_writes_nothing_after() {
    let Some(db) = Database::create("partition") else {
        return;
    };
    let Some((first, second)) = two_machines() else {
        return;
    };
    let port = forward_to_postgres();
    let home = tempfile::tempdir().expect("tempdir");
    let corpus = fixture_corpus();
    let corpus = corpus.to_str().expect("utf-8");
    let migrated = deepr(home.path(), &["--db", &db.url, "db", "migrate"]);
    assert!(migrated.status.success(), "{}", stderr(&migrated));
    let cells: Vec<(String, &str)> = TOPICS
        .iter()
        .enumerate()
        .map(|(t, topic)| (format!("part-{t}"), *topic))
        .collect();
    for (id, topic) in &cells {
        submit(
            home.path(),
            &db.url,
            cell_args(
                topic,
                corpus,
                ("standard", "linear"),
                &format!("fleet/{id}.md"),
                id,
            ),
            &[
                "--offline-latency",
                "400ms",
                "--concurrency",
                &STEPS.to_string(),
                "--io-concurrency",
                &CALLS_PER_STEP.to_string(),
                "--detach",
            ],
        );
    }

    // Worker A (machine 1) claims runs and checkpoints a few steps; then its link is cut.
    let a = first.worker(home.path(), &db, port);
    wait_for("worker A's first checkpoints", 90, || {
        count(&db.url, "SELECT count(*) FROM deepr_nodes") >= 4
    });
    first.link(false);
    let held = count(
        &db.url,
        "SELECT count(*) FROM deepr_runs WHERE state = 'running'",
    );
    let at_cut = count(&db.url, "SELECT count(*) FROM deepr_nodes");
    assert!(held >= 1, "worker A held no run when its link was cut");

    // Worker B (machine 2) claims A's runs once their leases run out and finishes all.
    let b = second.worker(home.path(), &db, port);
    wait_all_finished(&db.url, 300);
    drop(b);
    let resumed = count(
        &db.url,
        "SELECT count(*) FROM deepr_runs WHERE attempts > 1",
    );
    assert!(resumed >= 1, "no run A held was claimed again");
    let (nodes, reports) = (
        psql(&db.url, NODES).expect("nodes"),
        psql(&db.url, REPORTS).expect("reports"),
    );

    // A's link comes back: it learns that it lost its leases (from its heartbeat, or
    // from a write refused) and writes nothing.
    first.link(true);
    wait_for("worker A to say its leases were lost", 120, || {
        a.said().contains("was lost")
    });
    drop(a);
    assert_eq!(
        psql(&db.url, NODES).expect("nodes"),
        nodes,
        "A rewrote a checkpoint"
    );
    assert_eq!(
        psql(&db.url, REPORTS).expect("reports"),
        reports,
        "A rewrote a report"
    );

    // Re-paid calls: A journals what it paid, and B pays again for the steps A had not
    // checkpointed when its link went — at most what A had in flight until its lease ran
    // out (each run it held: `STEPS` steps, each with `CALLS_PER_STEP` calls).
    let repaid = count(
        &db.url,
        "SELECT count(*) FROM (SELECT run_id, entry->>'request' FROM deepr_calls \
         WHERE NOT (entry->>'cache_hit')::boolean GROUP BY run_id, entry->>'request' \
         HAVING count(*) > 1) twice",
    );
    let bound = held * (STEPS * CALLS_PER_STEP) as u64;
    eprintln!(
        "partition test: A held {held} runs and {at_cut} checkpoints at the cut; {resumed} \
         runs were claimed again; {repaid} calls were paid twice (at most {bound})"
    );
    assert!(
        repaid <= bound,
        "{repaid} calls paid twice for the {held} runs A held (at most {bound})"
    );

    // The fleet's reports are the local runs' to the byte.
    for (id, topic) in &cells {
        let out = format!("local/{id}.md");
        same_as_local(
            home.path(),
            &db.url,
            id,
            cell_args(topic, corpus, ("standard", "linear"), &out, id),
            &out,
        );
    }
}
