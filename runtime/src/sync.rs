//! Locks that survive a panic elsewhere: the data behind gangway's mutexes
//! stays consistent at every unlock, so a poisoned lock is taken as it is
//! rather than turning one panicked task into a panic in every other.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// [`Mutex::lock`] that takes a poisoned lock as it is.
pub(crate) trait LockUnpoisoned<T: ?Sized> {
    /// The guard, whether or not another holder panicked.
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> LockUnpoisoned<T> for Mutex<T> {
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
