//! Paths compared as text, for the `under` and `not_under` conditions:
//! lexical normalization (`.`, `..` and repeated slashes resolved without
//! touching the file system) and the "is this path inside that folder"
//! test built on it.
//!
//! Nothing here follows symbolic links or reads the disk: a rule decides
//! on the path the call names, and resolving links is the handler's job
//! (a handler that opens a path should resolve it and check again).

/// `path` with `.`, `..` and repeated or trailing slashes resolved as text,
/// or `None` when it is not absolute. `..` at the root stays at the root,
/// as the kernel does (`/../etc` is `/etc`).
pub(crate) fn normalize(path: &str) -> Option<String> {
    if !path.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            name => parts.push(name),
        }
    }
    let mut normal = String::with_capacity(path.len());
    for part in &parts {
        normal.push('/');
        normal.push_str(part);
    }
    if normal.is_empty() {
        normal.push('/');
    }
    Some(normal)
}

/// Whether `path`, once normalized, is `folder` or lies inside it. `folder`
/// must already be normalized (rules normalize theirs at load). A relative
/// `path` is under nothing here; the conditions treat it as unknown, since
/// where it points depends on a working directory the rule cannot see.
#[cfg(test)]
pub(crate) fn is_under(path: &str, folder: &str) -> bool {
    normalize(path).is_some_and(|path| is_under_normal(&path, folder))
}

/// Whether `path`, normalized already, is `folder` (normalized too) or lies
/// inside it.
pub(crate) fn is_under_normal(path: &str, folder: &str) -> bool {
    if folder == "/" {
        return true;
    }
    match path.strip_prefix(folder) {
        Some("") => true,
        // `/workspace2` is not under `/workspace`: the match must end at a
        // slash.
        Some(rest) => rest.starts_with('/'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_resolves_dots_and_slashes_as_text() {
        assert_eq!(normalize("/workspace/../etc").as_deref(), Some("/etc"));
        assert_eq!(normalize("/a/./b//c/").as_deref(), Some("/a/b/c"));
        assert_eq!(normalize("//a///b").as_deref(), Some("/a/b"));
        assert_eq!(normalize("/../../etc").as_deref(), Some("/etc"));
        assert_eq!(normalize("/").as_deref(), Some("/"));
        assert_eq!(normalize("/a/..").as_deref(), Some("/"));
        assert_eq!(normalize("/a/b/../../..").as_deref(), Some("/"));
        assert_eq!(normalize("a/b"), None);
        assert_eq!(normalize("./a"), None);
        assert_eq!(normalize("~/a"), None);
        assert_eq!(normalize(""), None);
    }

    #[test]
    fn under_compares_whole_components_after_normalizing() {
        assert!(is_under("/workspace", "/workspace"));
        assert!(is_under("/workspace/", "/workspace"));
        assert!(is_under("/workspace/tmp/x", "/workspace"));
        assert!(is_under("/workspace//tmp/./x", "/workspace"));
        assert!(is_under("/workspace/a/../b", "/workspace"));
        assert!(!is_under("/workspace/../etc/passwd", "/workspace"));
        assert!(!is_under("/workspace/..", "/workspace"));
        assert!(!is_under("/workspace2/x", "/workspace"));
        assert!(!is_under("/work", "/workspace"));
        assert!(!is_under("/etc", "/workspace"));
        assert!(is_under("/etc", "/"));
        assert!(is_under("/", "/"));
    }

    #[test]
    fn relative_paths_are_under_nothing() {
        assert!(!is_under("workspace/x", "/workspace"));
        assert!(!is_under("./x", "/"));
        assert!(!is_under("../workspace/x", "/workspace"));
        assert!(!is_under("", "/"));
    }
}
