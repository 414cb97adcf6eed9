//! The host's controllers, by id.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{Controller, ControllerError, ControllerInput, RuntimeStatus, StopOutcome};
use crate::sync::LockUnpoisoned;

/// Controllers keyed by their id (block id). Registering under a taken id
/// replaces the old controller through
/// [`stop_for_replace`](Controller::stop_for_replace); removing one awaits
/// its [`shutdown`](Controller::shutdown).
///
/// ```no_run
/// use std::sync::Arc;
/// use std::time::{Duration, Instant};
/// use gangway::controller::{Controller, ControllerInput, ControllerRegistry, LaunchSpec, ShellController};
///
/// # async fn run() -> Result<(), gangway::controller::ControllerError> {
/// let registry = ControllerRegistry::new();
/// let shell = Arc::new(ShellController::new("term-1", LaunchSpec::new("bash")));
/// shell.start(Default::default(), None, false)?;
/// registry.register(shell);
/// registry.send_input("term-1", ControllerInput::data("ls\n"), None)?;
/// registry.remove("term-1", Instant::now() + Duration::from_secs(2)).await;
/// # Ok(()) }
/// ```
#[derive(Default)]
pub struct ControllerRegistry {
    controllers: Mutex<BTreeMap<String, Arc<dyn Controller>>>,
}

impl std::fmt::Debug for ControllerRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerRegistry")
            .field("ids", &self.ids())
            .finish()
    }
}

impl ControllerRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<dyn Controller>>> {
        self.controllers.lock_unpoisoned()
    }

    /// Adds `controller` under its [`block_id`](Controller::block_id). One
    /// already there is stopped for the replace (its process ends, what it
    /// started to outlive it does not) and returned.
    pub fn register(&self, controller: Arc<dyn Controller>) -> Option<Arc<dyn Controller>> {
        let id = controller.block_id().to_owned();
        let replaced = self.lock().insert(id, controller.clone());
        match replaced {
            // The same controller again: nothing is replaced.
            Some(old) if Arc::ptr_eq(&old, &controller) => None,
            Some(old) => {
                let _ = old.stop_for_replace("done");
                Some(old)
            }
            None => None,
        }
    }

    /// The controller with this id.
    pub fn get(&self, id: &str) -> Option<Arc<dyn Controller>> {
        self.lock().get(id).cloned()
    }

    /// The ids, in order.
    pub fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// Every controller's status, in id order.
    pub fn list(&self) -> Vec<RuntimeStatus> {
        let controllers: Vec<_> = self.lock().values().cloned().collect();
        controllers.iter().map(|c| c.get_runtime_status()).collect()
    }

    /// Sends input to the controller with this id.
    ///
    /// # Errors
    ///
    /// [`ControllerError::UnknownController`], or the controller's error.
    pub fn send_input(
        &self,
        id: &str,
        input: ControllerInput,
        seq: Option<u64>,
    ) -> Result<(), ControllerError> {
        let controller = self
            .get(id)
            .ok_or_else(|| ControllerError::UnknownController { id: id.to_owned() })?;
        controller.send_input(input, seq)
    }

    /// Takes the controller out and shuts it down (gracefully, by force at
    /// `deadline`); `None` when there was none.
    pub async fn remove(&self, id: &str, deadline: Instant) -> Option<StopOutcome> {
        let controller = self.lock().remove(id)?;
        Some(controller.shutdown(deadline).await)
    }

    /// Shuts every controller down at once, each by `deadline`, and
    /// empties the registry. Call it within a tokio runtime.
    pub async fn shutdown_all(&self, deadline: Instant) -> Vec<(String, StopOutcome)> {
        let controllers: Vec<_> = std::mem::take(&mut *self.lock()).into_iter().collect();
        let stopping: Vec<_> = controllers
            .iter()
            .map(|(id, controller)| (id.clone(), tokio::spawn(controller.shutdown(deadline))))
            .collect();
        let mut outcomes = Vec::with_capacity(stopping.len());
        for (id, task) in stopping {
            outcomes.push((id, task.await.unwrap_or(StopOutcome::Killed)));
        }
        outcomes
    }
}
