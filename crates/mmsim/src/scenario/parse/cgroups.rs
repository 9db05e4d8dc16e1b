//! `[[cgroup]]`: memory cgroups (v1) below the root, with their knobs under the cgroup file
//! names (`memory.limit_in_bytes = "512M"`, a dotted key, is the file
//! `memory.limit_in_bytes` of the group's directory).

use super::check::{array_of_tables, nearest, opt, sub_table, with_suggestion, Cx, Item, Res};
use super::tree::Val;
use super::values::{string, u32_in, SizeKind};
use super::PAGE;
use crate::scenario::CgroupSpec;

const CGROUP_KEYS: &[&str] = &["name", "memory"];
/// The memory controller's files a scenario may write.
pub(super) const MEMORY_FILES: &[&str] = &[
    "limit_in_bytes",
    "soft_limit_in_bytes",
    "use_hierarchy",
    "swappiness",
];

/// Every `[[cgroup]]`, parents before their children.
pub(super) fn cgroups(cx: &Cx<'_>, item: &Item<'_>) -> Res<Vec<CgroupSpec>> {
    let mut out: Vec<CgroupSpec> = Vec::new();
    for t in array_of_tables(cx, item, "cgroup")? {
        let t = t?;
        t.check_keys(cx, CGROUP_KEYS, "a [[cgroup]]")?;
        let name_item = t.required(
            cx,
            "name",
            "the group's path below the root, such as \"A\" or \"A/B\"",
        )?;
        let name = string(
            cx,
            &name_item,
            "the group's path as a string, such as \"A\"",
        )?;
        let parts: Vec<&str> = name.split('/').collect();
        if parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == ".." || p.chars().any(char::is_control))
        {
            return Err(name_item.fail(
                cx,
                format!("expected a path of directory names below the root such as \"A\" or \"A/B\", found \"{name}\""),
            ));
        }
        if out.iter().any(|c| c.name == name) {
            return Err(name_item.fail(cx, format!("duplicate cgroup \"{name}\"")));
        }
        let parent = if parts.len() == 1 {
            None
        } else {
            let pname = parts[..parts.len() - 1].join("/");
            match out.iter().position(|c| c.name == pname) {
                Some(i) => Some(i),
                None => {
                    return Err(name_item.fail(
                        cx,
                        format!("cgroup \"{name}\" needs its parent \"{pname}\" listed before it as a [[cgroup]]"),
                    ))
                }
            }
        };
        // A group takes its parent's use_hierarchy when created.
        let parent_hierarchy = parent.is_some_and(|p| out[p].use_hierarchy);
        let mut spec = CgroupSpec {
            name: name.to_owned(),
            parent,
            use_hierarchy: parent_hierarchy,
            ..Default::default()
        };
        if let Some(mem) = opt(&t, "memory") {
            let m = sub_table(
                cx,
                &mem,
                "the memory controller's files, e.g. memory.limit_in_bytes = \"512M\"",
            )?;
            for (key, item) in m.items() {
                match key {
                    "limit_in_bytes" => spec.limit_in_bytes = limit(cx, &item)?,
                    "soft_limit_in_bytes" => spec.soft_limit_in_bytes = limit(cx, &item)?,
                    "use_hierarchy" => {
                        spec.use_hierarchy = u32_in(cx, &item, 0, 1, "0 or 1")? == 1;
                        if parent_hierarchy && !spec.use_hierarchy {
                            // The kernel refuses the write (EINVAL) below a hierarchical
                            // parent.
                            return Err(item.fail(
                                cx,
                                format!("cgroup \"{name}\" cannot clear memory.use_hierarchy: its parent is hierarchical, so its children are too"),
                            ));
                        }
                    }
                    "swappiness" => {
                        spec.swappiness = Some(u32_in(cx, &item, 0, 100, "an integer 0..=100")?)
                    }
                    _ => {
                        let e = item.fail(
                            cx,
                            format!(
                                "unknown memory cgroup file 'memory.{key}'; expected one of: {}",
                                MEMORY_FILES
                                    .iter()
                                    .map(|f| format!("memory.{f}"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        );
                        return Err(with_suggestion(e, nearest(key, MEMORY_FILES)));
                    }
                }
            }
        }
        out.push(spec);
    }
    Ok(out)
}

/// A limit file's value: a size (rounded up to whole pages, as the kernel rounds), or -1
/// for unlimited.
fn limit(cx: &Cx<'_>, item: &Item<'_>) -> Res<Option<u64>> {
    if let Val::Int(-1) = item.node.val {
        return Ok(None);
    }
    if let Val::Str(s) = &item.node.val {
        if s.trim() == "-1" {
            return Ok(None);
        }
    }
    let b = super::values::size(cx, item, SizeKind::Size, None)?;
    Ok(Some(b.div_ceil(PAGE) * PAGE))
}
