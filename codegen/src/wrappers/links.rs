//! Link wrappers: the client program itself in the wrapper directory, as
//! [`CLIENT_FILE`], and one symbolic link per command to it
//! (`search -> gangway`). Run through a link, the client takes the command
//! from the name it was run as, so a call costs one process start, not a
//! shell's and then the client's.
//!
//! The links are relative, so the directory works wherever it is mounted
//! (a sandbox binding it elsewhere included). The client is copied (never
//! hard-linked: the copy shares nothing with the host's own program, even
//! if a sandbox could write to the directory) into a fresh temporary file,
//! then renamed into place, so a call never runs half a program. A marker
//! file, [`PLACED_MARKER`], records that gangway placed it: a `gangway`
//! already in the directory without the marker (a user's own CLI in
//! `~/bin`, say) is never replaced, and script wrappers written later
//! remove the placed client with the links.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use super::error::{WrapperError, WrapperReport, io_error};
use super::existing::{Existing, existing_wrappers, refuse_foreign, remove_stale, stale_diff};
use crate::schema::{Manifest, is_valid_command_name};

pub use crate::CLIENT_FILE;

/// The file that records that gangway placed the client in the directory
/// (hidden, so `PATH` lookups and listings pass it by).
pub const PLACED_MARKER: &str = ".gangway-client-placed";

/// The marker's contents.
const MARKER_TEXT: &str = "# the `gangway` program here was placed by gangway's link wrappers; \
                           gangway replaces or removes it with them\n";

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

/// Looks at the client's place: empty, the client as it should be, or a
/// program gangway placed earlier (the marker says so) that differs; any
/// other file there was not written by gangway and is refused.
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
    if !meta.is_file() || !placed_by_us(dir) {
        return Err(WrapperError::NotOurs { path });
    }
    let executable = meta.permissions().mode() & 0o111 != 0;
    if executable && same_contents(client, client_meta, &path, &meta)? {
        Ok(ClientSlot::Current)
    } else {
        Ok(ClientSlot::Stale)
    }
}

/// Whether the marker says gangway placed the client in `dir`.
pub(super) fn placed_by_us(dir: &Path) -> bool {
    fs::read_to_string(dir.join(PLACED_MARKER)).is_ok_and(|text| text == MARKER_TEXT)
}

/// Removes a client gangway placed in `dir`, and its marker: script
/// wrappers do not run it, and left first on `PATH` it would shadow the
/// real `gangway`. Whether there was one.
pub(super) fn remove_placed_client(dir: &Path) -> Result<bool, WrapperError> {
    let path = dir.join(CLIENT_FILE);
    if !placed_by_us(dir) {
        return Ok(false);
    }
    match fs::remove_file(&path) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(io_error(&path)(error)),
    }
    let marker = dir.join(PLACED_MARKER);
    fs::remove_file(&marker).map_err(io_error(&marker))?;
    Ok(true)
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

/// Puts a copy of the client program in place: written to a fresh
/// temporary file (created exclusively, so nothing planted at a predictable
/// name is written through), made executable, synced, and renamed over the
/// target once nobody holds it open for writing (the marker is written
/// just before the rename).
fn place_client(dir: &Path, client: &Path) -> Result<(), WrapperError> {
    let target = dir.join(CLIENT_FILE);
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{CLIENT_FILE}."))
        .tempfile_in(dir)
        .map_err(io_error(dir))?;
    let mut source = fs::File::open(client).map_err(|source| WrapperError::MissingClient {
        path: client.to_path_buf(),
        source,
    })?;
    io::copy(&mut source, temp.as_file_mut()).map_err(io_error(temp.path()))?;
    temp.as_file_mut().flush().map_err(io_error(temp.path()))?;
    temp.as_file().sync_all().map_err(io_error(temp.path()))?;
    fs::set_permissions(temp.path(), fs::Permissions::from_mode(0o755))
        .map_err(io_error(temp.path()))?;
    let temp = temp.into_temp_path();
    super::settle::until_no_writers(&temp);
    // The marker first: a run stopped between the two leaves a marker and
    // no program (placed next time), never a program gangway would then
    // refuse to replace as not its own.
    let marker = dir.join(PLACED_MARKER);
    fs::write(&marker, MARKER_TEXT).map_err(io_error(&marker))?;
    temp.persist(&target)
        .map_err(|error| io_error(&target)(error.error))?;
    Ok(())
}

/// Makes `dir/name` a link to the client, atomically: the link is made
/// under a fresh name (retried if taken) and renamed over the target.
fn place_link(dir: &Path, name: &str) -> Result<(), WrapperError> {
    let target = dir.join(name);
    let pid = std::process::id();
    for attempt in 0u32.. {
        let temp = dir.join(format!(".{name}.{pid}.{attempt}.link"));
        match std::os::unix::fs::symlink(CLIENT_FILE, &temp) {
            Ok(()) => {
                return fs::rename(&temp, &target).map_err(|error| {
                    let _ = fs::remove_file(&temp);
                    io_error(&target)(error)
                });
            }
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => {}
            Err(error) => return Err(io_error(&temp)(error)),
        }
    }
    unreachable!("the loop returns by its hundredth attempt")
}

/// Writes link wrappers for `manifest` into `dir` (created if missing): a
/// copy of the program `client` as [`CLIENT_FILE`] and a link per command, replacing
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
        place_client(dir, client)?;
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
    remove_stale(
        dir,
        &existing,
        |name| names.iter().any(|n| n == name),
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
    stale_diff(&existing, |name| names.iter().any(|n| n == name), &mut diff);
    if diff.is_empty() {
        Ok(())
    } else {
        Err(WrapperError::OutOfDate { diff })
    }
}
