//! [`AnyModel`]: the provider a resolved [`ProviderConfig`] names, behind one enum, with the
//! overflow of a context explained on its way out.

use super::transport::{Transport, Tunable};
use super::{
    Delta, Model, ModelError, ProviderConfig, ProviderKind, Reply, Request, anthropic, demo,
    openai, overflow,
};

/// Any provider behind one enum, so the loop can hold it without `dyn` (a trait with an
/// `async fn` is not dyn-compatible).
#[derive(Debug)]
pub enum AnyModel {
    /// OpenAI-compatible (also Ollama).
    OpenAi(openai::OpenAi),
    /// Anthropic Messages.
    Anthropic(anthropic::Anthropic),
    /// The offline demo.
    Demo(demo::Demo),
}

impl AnyModel {
    /// The provider `config` names. `windows` tells the demo which commands to plan.
    ///
    /// # Errors
    ///
    /// [`ModelError::MissingKey`] when the official server gets no key, and
    /// [`ModelError::BadUrl`] for a base URL that is not http(s).
    pub fn new(config: &ProviderConfig, windows: bool) -> Result<Self, ModelError> {
        match config.provider {
            ProviderKind::OpenAi | ProviderKind::Ollama => {
                openai::OpenAi::new(config).map(Self::OpenAi)
            }
            ProviderKind::Anthropic => anthropic::Anthropic::new(config).map(Self::Anthropic),
            ProviderKind::Demo => Ok(Self::Demo(demo::Demo::new(windows))),
        }
    }

    /// The models the server says it serves (`GET /models`; Anthropic's `/v1/models`), in
    /// its order; `None` when it does not say (no such endpoint, an error, no answer within
    /// a few seconds) or for the demo.
    pub async fn served_models(&self) -> Option<Vec<String>> {
        match self {
            Self::OpenAi(m) => m.served_models().await,
            Self::Anthropic(m) => m.served_models().await,
            Self::Demo(_) => None,
        }
    }
}

impl Tunable for AnyModel {
    fn transport_mut(&mut self) -> Option<&mut Transport> {
        match self {
            Self::OpenAi(m) => m.transport_mut(),
            Self::Anthropic(m) => m.transport_mut(),
            Self::Demo(m) => m.transport_mut(),
        }
    }
}

impl Model for AnyModel {
    fn describe(&self) -> String {
        match self {
            Self::OpenAi(m) => m.describe(),
            Self::Anthropic(m) => m.describe(),
            Self::Demo(m) => m.describe(),
        }
    }

    fn output_limit(&self) -> Option<u32> {
        match self {
            Self::OpenAi(m) => m.output_limit(),
            Self::Anthropic(m) => m.output_limit(),
            Self::Demo(m) => m.output_limit(),
        }
    }

    async fn complete(
        &mut self,
        request: &Request<'_>,
        on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
    ) -> Result<Reply, ModelError> {
        let result = match self {
            Self::OpenAi(m) => m.complete(request, on_delta).await,
            Self::Anthropic(m) => m.complete(request, on_delta).await,
            Self::Demo(m) => m.complete(request, on_delta).await,
        };
        result.map_err(|error| overflow::explain(error, request))
    }
}
