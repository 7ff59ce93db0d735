//! Reaching the fleet database: connecting (with the schema checked, installed on
//! first use), the async runtime fleet commands run on, and fleet errors as the
//! command line reports them.

use anyhow::Context;
use deepr_fleet::{Fleet, FleetError};
use deepr_session::{usage, Failure};

/// A fleet error as the command line reports it: bad input exits 2.
pub fn failure(error: FleetError) -> Failure {
    match error {
        FleetError::LeaseLost(_) | FleetError::Db(_) => Failure::Run(anyhow::Error::new(error)),
        other => usage(other.to_string()),
    }
}

pub fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?)
}

/// Connect and make sure the schema is this deepr's (installing it on first use).
pub async fn connect(url: &str) -> Result<Fleet, Failure> {
    let fleet = Fleet::connect(url).await.map_err(failure)?;
    fleet.ready().await.map_err(failure)?;
    Ok(fleet)
}
