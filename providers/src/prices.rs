//! Prices: USD per million input / output / cached-input tokens per model, from the
//! table shipped in `providers/prices.toml`, extended or overridden by the user's config,
//! and the LLM wrapper that puts a price on every call (`--price-as MODEL` prices any
//! run — the offline model's included — as if that model had answered).

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use deepr_orchestrator::{LlmError, LlmProvider, LlmRequest, LlmResponse};
use serde::{Deserialize, Serialize};

const SHIPPED: &str = include_str!("../prices.toml");

pub use deepr_settings::Price;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceTable {
    pub models: BTreeMap<String, Price>,
}

impl PriceTable {
    /// The shipped table.
    pub fn shipped() -> Self {
        toml::from_str(SHIPPED).unwrap_or_default()
    }

    /// The shipped table with `overrides` (from config) on top. Negative or non-finite
    /// prices are refused.
    pub fn with_overrides(overrides: &BTreeMap<String, Price>) -> Result<Self, String> {
        let mut table = Self::shipped();
        for (model, price) in overrides {
            let values = [Some(price.input), Some(price.output), price.cached];
            if values.iter().flatten().any(|v| !v.is_finite() || *v < 0.0) {
                return Err(format!(
                    "price of {model:?} must be zero or more dollars per million tokens"
                ));
            }
            table.models.insert(model.clone(), *price);
        }
        Ok(table)
    }

    /// The price of a model, by its name with or without a `provider:` prefix.
    pub fn price(&self, model: &str) -> Option<Price> {
        let bare = model.split_once(':').map(|(_, m)| m).unwrap_or(model);
        self.models
            .get(model)
            .or_else(|| self.models.get(bare))
            .copied()
    }

    /// Dollars for one call.
    pub fn cost(
        &self,
        model: &str,
        prompt_tokens: u64,
        completion_tokens: u64,
        cached_tokens: u64,
    ) -> Option<f64> {
        let price = self.price(model)?;
        let cached = cached_tokens.min(prompt_tokens);
        let fresh = prompt_tokens - cached;
        let cached_rate = price.cached.unwrap_or(price.input);
        Some(
            (fresh as f64 * price.input
                + cached as f64 * cached_rate
                + completion_tokens as f64 * price.output)
                / 1e6,
        )
    }
}

/// Sets `cost_usd` on every answer from the price table (as `price_as`, if given).
pub struct PricedLlm {
    pub inner: Arc<dyn LlmProvider>,
    pub table: Arc<PriceTable>,
    pub price_as: Option<String>,
}

#[async_trait]
impl LlmProvider for PricedLlm {
    fn model_id(&self) -> String {
        self.inner.model_id()
    }

    fn model_id_for(&self, prompt_id: &str) -> String {
        self.inner.model_id_for(prompt_id)
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let mut response = self.inner.complete(request).await?;
        let model = self
            .price_as
            .clone()
            .unwrap_or_else(|| response.model.clone());
        response.cost_usd = self
            .table
            .cost(
                &model,
                response.prompt_tokens,
                response.completion_tokens,
                response.cached_tokens,
            )
            .unwrap_or(0.0);
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_table_parses_and_prices_calls() {
        let table = PriceTable::shipped();
        assert!(table.models.len() >= 5, "the shipped table parses");
        // 1M fresh input at $0.40, 1M output at $1.60.
        let cost = table
            .cost("openai:gpt-4.1-mini", 1_000_000, 1_000_000, 0)
            .expect("priced");
        assert!((cost - 2.0).abs() < 1e-9, "{cost}");
        // Cached input is cheaper.
        let cached = table
            .cost("gpt-4.1-mini", 1_000_000, 0, 1_000_000)
            .expect("priced");
        assert!((cached - 0.10).abs() < 1e-9, "{cached}");
        assert_eq!(table.cost("ollama:llama3", 10, 10, 0), None);
    }

    #[test]
    fn overrides_extend_and_are_checked() {
        let mut overrides = BTreeMap::new();
        overrides.insert(
            "local".to_string(),
            Price {
                input: 1.0,
                output: 2.0,
                cached: None,
            },
        );
        let table = PriceTable::with_overrides(&overrides).expect("valid");
        assert_eq!(table.cost("ollama:local", 1_000_000, 0, 0), Some(1.0));
        overrides.insert(
            "bad".to_string(),
            Price {
                input: -1.0,
                output: 0.0,
                cached: None,
            },
        );
        assert!(PriceTable::with_overrides(&overrides).is_err());
    }
}
