//! Link wrappers: the client program itself in the wrapper directory, as
//! [`CLIENT_FILE`], and one symbolic link per command to it
//! (`search -> gangway`). Run through a link, the client takes the command
//! from the name it was run as, so a call costs one process start, not a
//! shell's and then the client's.
//!
//! The links are relative, so the directory works wherever it is mounted
//! (a sandbox binding it elsewhere included). The client is hard-linked
//! when it is on the same file system and executable, else copied; either
//! way it lands under a temporary name and is renamed into place, so a
//! call never runs half a program.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::{
    Existing, WrapperError, WrapperReport, existing_wrappers, io_error, refuse_foreign,
    remove_stale, stale_diff,
};
use crate::schema::{Manifest, is_valid_command_name};

/// The client program's file name in a directory of link wrappers: what
/// every link points to, and what `gangway list` or `gangway mcp` run as
/// inside the sandbox.
pub const CLIENT_FILE: &str = "gangway";

/// Whether `path` (named `name`) is a link wrapper gangway wrote: a
/// symbolic link to exactly [`CLIENT_FILE`], named like a command.
pub(super) fn is_our_link(path: &Path, name: &str) -> bool {
    is_valid_command_name(name)
        && name != CLIENT_FILE
        && fs::read_link(path).is_ok_and(|target| target == Path::new(CLIENT_FILE))
}

/// The command names of `manifest`, each a valid file name and none the
/// client's.
fn link_names(manifest: &Manifest) -> Result<Vec<String>, WrapperError> {
    manifest
        .commands
        .iter()
        .map(|schema| {
            let name = schema.name.to_string();
            if !is_valid_command_name(&name) {
                Err(WrapperError::InvalidName(name))
            } else if name == CLIENT_FILE {
                Err(WrapperError::ReservedName(name))
            } else {
                Ok(name)
            }
        })
        .collect()
}

/// The client program's metadata, or why it cannot be placed.
fn client_metadata(client: &Path) -> Result<fs::Metadata, WrapperError> {
    let missing = |source| WrapperError::MissingClient {
        path: client.to_path_buf(),
        source,
    };
    let meta = fs::metadata(client).map_err(missing)?;
    if !meta.is_file() {
        return Err(missing(io::Error::other("not a regular file")));
    }
    Ok(meta)
}

/// What is in the client's place in the directory.
enum ClientSlot {
    /// Nothing yet.
    Empty,
    /// The client program, as it should be.
    Current,
    /// An older (or other) program: ours to replace.
    Stale,
}

/// Looks at the client's place: a program there (an executable starting
/// as one, `\x7fELF`) is ours to replace; anything else was not written by
/// gangway and is refused.
fn client_slot(
    dir: &Path,
    client: &Path,
    client_meta: &fs::Metadata,
) -> Result<ClientSlot, WrapperError> {
    let path = dir.join(CLIENT_FILE);
    let meta = match fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(ClientSlot::Empty),
        Err(error) => return Err(io_error(&path)(error)),
    };
    if !meta.is_file() || !starts_with(&path, b"\x7fELF") {
        return Err(WrapperError::NotOurs { path });
    }
    let executable = meta.permissions().mode() & 0o111 != 0;
    if executable && same_contents(client, client_meta, &path, &meta)? {
        Ok(ClientSlot::Current)
    } else {
        Ok(ClientSlot::Stale)
    }
}

fn starts_with(path: &Path, magic: &[u8]) -> bool {
    let mut head = vec![0u8; magic.len()];
    fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut head))
        .is_ok()
        && head == magic
}

/// Whether two files hold the same bytes (the same file, trivially).
fn same_contents(
    a: &Path,
    a_meta: &fs::Metadata,
    b: &Path,
    b_meta: &fs::Metadata,
) -> Result<bool, WrapperError> {
    if (a_meta.dev(), a_meta.ino()) == (b_meta.dev(), b_meta.ino()) {
        return Ok(true);
    }
    if a_meta.len() != b_meta.len() {
        return Ok(false);
    }
    let a_bytes = fs::read(a).map_err(|source| WrapperError::MissingClient {
        path: a.to_path_buf(),
        source,
    })?;
    let b_bytes = fs::read(b).map_err(io_error(b))?;
    Ok(a_bytes == b_bytes)
}

/// A name beside the target, unused, for writing it before the rename.
fn temporary_name(dir: &Path, name: &str) -> PathBuf {
    let pid = std::process::id();
    (0u32..)
        .map(|n| dir.join(format!(".{name}.{pid}.{n}")))
        .find(|path| fs::symlink_metadata(path).is_err())
        .unwrap_or_else(|| dir.join(format!(".{name}.{pid}")))
}

/// Puts the client program in place: a hard link when it is executable
/// and on this file system (no copy, nothing to keep in step), else a copy
/// made executable; under a temporary name, renamed over the target.
fn place_client(dir: &Path, client: &Path, client_meta: &fs::Metadata) -> Result<(), WrapperError> {
    let target = dir.join(CLIENT_FILE);
    let temp = temporary_name(dir, CLIENT_FILE);
    let linked =
        client_meta.permissions().mode() & 0o111 != 0 && fs::hard_link(client, &temp).is_ok();
    if !linked {
        fs::copy(client, &temp).map_err(|source| WrapperError::MissingClient {
            path: client.to_path_buf(),
            source,
        })?;
        if let Err(error) = fs::set_permissions(&temp, fs::Permissions::from_mode(0o755)) {
            let _ = fs::remove_file(&temp);
            return Err(io_error(&temp)(error));
        }
        // A copy was written: see `settle` for why this waits.
        super::settle::until_no_writers(&temp);
    }
    fs::rename(&temp, &target).map_err(|error| {
        let _ = fs::remove_file(&temp);
        io_error(&target)(error)
    })
}

/// Makes `dir/name` a link to the client, atomically.
fn place_link(dir: &Path, name: &str) -> Result<(), WrapperError> {
    let target = dir.join(name);
    let temp = temporary_name(dir, name);
    std::os::unix::fs::symlink(CLIENT_FILE, &temp).map_err(io_error(&temp))?;
    fs::rename(&temp, &target).map_err(|error| {
        let _ = fs::remove_file(&temp);
        io_error(&target)(error)
    })
}

/// Writes link wrappers for `manifest` into `dir` (created if missing): the
/// program `client` as [`CLIENT_FILE`] and a link per command, replacing
/// script wrappers of the same commands and removing the wrappers (of
/// either style) of commands no longer there. Up-to-date links and an
/// up-to-date client are left alone.
///
/// # Errors
///
/// [`WrapperError::InvalidName`], [`WrapperError::ReservedName`] (a
/// command named like the client), [`WrapperError::MissingClient`],
/// [`WrapperError::NotOurs`] (checked before anything is written), or a
/// file-system error.
pub fn write_links(
    manifest: &Manifest,
    dir: &Path,
    client: &Path,
) -> Result<WrapperReport, WrapperError> {
    let names = link_names(manifest)?;
    let client_meta = client_metadata(client)?;
    fs::create_dir_all(dir).map_err(io_error(dir))?;
    let existing = existing_wrappers(dir)?;
    refuse_foreign(dir, &names, &existing)?;
    let slot = client_slot(dir, client, &client_meta)?;
    let mut report = WrapperReport::default();
    if !matches!(slot, ClientSlot::Current) {
        place_client(dir, client, &client_meta)?;
        report.client_written = true;
    }
    for name in &names {
        if existing.get(name) == Some(&Existing::Link) {
            report.unchanged.push(name.clone());
        } else {
            place_link(dir, name)?;
            report.written.push(name.clone());
        }
    }
    let wanted: BTreeMap<&str, ()> = names.iter().map(|n| (n.as_str(), ())).collect();
    remove_stale(
        dir,
        &existing,
        |name| wanted.contains_key(name),
        &mut report,
    )?;
    Ok(report)
}

/// Checks that `dir` holds exactly the link wrappers of `manifest` and the
/// current `client`, writing nothing.
///
/// # Errors
///
/// [`WrapperError::OutOfDate`] listing each difference, or as
/// [`write_links`].
pub fn check_links(manifest: &Manifest, dir: &Path, client: &Path) -> Result<(), WrapperError> {
    let names = link_names(manifest)?;
    let client_meta = client_metadata(client)?;
    let existing = existing_wrappers(dir)?;
    let mut diff = String::new();
    match client_slot(dir, client, &client_meta) {
        Ok(ClientSlot::Current) => {}
        Ok(ClientSlot::Empty) => diff.push_str(&format!(
            "{CLIENT_FILE}: missing, want a copy of {}\n",
            client.display()
        )),
        Ok(ClientSlot::Stale) => diff.push_str(&format!(
            "{CLIENT_FILE}: differs from {}\n",
            client.display()
        )),
        Err(WrapperError::NotOurs { path }) => diff.push_str(&format!(
            "{CLIENT_FILE}: {} is not a program gangway placed\n",
            path.display()
        )),
        Err(error) => return Err(error),
    }
    for name in &names {
        match existing.get(name) {
            Some(Existing::Link) => {}
            Some(Existing::Script(_)) => {
                diff.push_str(&format!("{name}: a script, want a link to {CLIENT_FILE}\n"));
            }
            None if fs::symlink_metadata(dir.join(name)).is_ok() => {
                diff.push_str(&format!("{name}: not a gangway wrapper\n"));
            }
            None => diff.push_str(&format!("{name}: missing link to {CLIENT_FILE}\n")),
        }
    }
    let wanted: BTreeMap<&str, ()> = names.iter().map(|n| (n.as_str(), ())).collect();
    stale_diff(&existing, |name| wanted.contains_key(name), &mut diff);
    if diff.is_empty() {
        Ok(())
    } else {
        Err(WrapperError::OutOfDate { diff })
    }
}
