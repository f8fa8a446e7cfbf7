//! The machine drawn as nested boxes, the way the topology code sees it:
//!
//! ```text
//!  ┌ package 0 ─────────────────────────────────────────┐
//!  │ ┌ node 0 · LLC ──────────────┐ ┌ node 1 · LLC ─────┐ │
//!  │ │ ┌ cluster ┐ ┌ cluster ┐    │ │ ...               │ │
//!  │ │ │ 0 1 2 3 │ │ 4 5 6 7 │ …  │ │                   │ │
//! ```
//!
//! A level with a single child is folded into its parent's label, and a cluster is
//! drawn only where it groups some but not all of an LLC's cores, so small and flat
//! machines do not drown in boxes. Cores with SMT siblings get a box of threads.

use std::rc::Rc;
use std::sync::Arc;

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::topology::Machine;
use schedlab_core::wakeup::Reject;
use yew::prelude::*;

use crate::components::export_bar::FigureExport;
use crate::state::WakeMarks;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub machine: Arc<Machine>,
    pub selected: CpuId,
    /// CPUs to shade, e.g. the span of the domain level under the pointer.
    #[prop_or_default]
    pub highlight: Option<CpuMask>,
    /// After a simulation: each CPU's busy share of the window, per mille.
    #[prop_or_default]
    pub heat: Option<Rc<Vec<(u32, u64)>>>,
    /// In the wake-up tab: busy CPUs, waker, prev, probes and the chosen CPU(s).
    #[prop_or_default]
    pub wake: Option<Rc<WakeMarks>>,
    /// The line above the drawing saying what a click does.
    #[prop_or(AttrValue::Static("Click a CPU to show its sched domains."))]
    pub hint: AttrValue,
    pub on_select: Callback<CpuId>,
}

/// Per CPU, its busy share (per mille), when there is one to show.
fn heat_by_cpu(heat: Option<&Vec<(u32, u64)>>, nr: u32) -> Option<Vec<Option<u64>>> {
    heat.map(|h| {
        let mut v = vec![None; nr as usize];
        for &(c, permille) in h.iter() {
            if let Some(slot) = v.get_mut(c as usize) {
                *slot = Some(permille);
            }
        }
        v
    })
}

/// A CPU's classes and title outside the wake-up tab: selected, in the shaded span,
/// its busy share (`permille`) after a run; with the heat's style.
fn domain_marks(
    props: &Props,
    permille: Option<u64>,
    cpu: CpuId,
    class: &mut Classes,
    title: &mut String,
) -> Option<String> {
    if cpu == props.selected {
        class.push("selected");
    }
    if props.highlight.as_ref().is_some_and(|h| h.test_cpu(cpu)) {
        class.push("in-span");
    }
    let permille = permille?;
    class.push("heat");
    if permille > 550 {
        class.push("hot");
    }
    title.push_str(&format!(
        " · busy {:.1}% of the window",
        permille as f64 / 10.0
    ));
    Some(format!("--heat: {:.3}", permille as f64 / 1000.0))
}

/// A CPU's classes and title in the wake-up tab: busy or idle, waker, prev, chosen,
/// probed (with its probe number's badge).
fn wake_marks(w: &WakeMarks, cpu: CpuId, class: &mut Classes, title: &mut String) -> Option<Html> {
    class.push(if w.busy.test_cpu(cpu) { "busy" } else { "idle" });
    title.push_str(if w.busy.test_cpu(cpu) {
        " · busy"
    } else {
        " · idle"
    });
    if cpu == w.waker {
        class.push("waker");
        title.push_str(" · waker");
    }
    if cpu == w.prev {
        class.push("prev");
        title.push_str(" · wakee's prev");
    }
    if w.chosen_a == Some(cpu) {
        class.push("chosen-a");
        title.push_str(" · chosen (A)");
    }
    if w.chosen_b == Some(cpu) {
        class.push("chosen-b");
        title.push_str(" · chosen (B)");
    }
    let (order, verdict) = w.probes.get(&cpu.0)?;
    class.push(reject_class(*verdict));
    let nums: Vec<String> = order.iter().map(u32::to_string).collect();
    title.push_str(&format!(
        " · probe {}: {}",
        nums.join(", "),
        verdict.map_or("idle, taken", Reject::as_str)
    ));
    Some(html! { <sup class="probe-no">{ order[0] }</sup> })
}

/// The CSS class of a probe verdict (the legend in the wake-up panel uses the same).
pub fn reject_class(r: Option<Reject>) -> &'static str {
    match r {
        None => "probe-taken",
        Some(Reject::Busy) => "probe-busy",
        Some(Reject::CookieMismatch) => "probe-cookie",
        Some(Reject::NotIdleCore) => "probe-not-core",
        Some(Reject::BudgetSpent) => "probe-budget",
        Some(Reject::NotAllowed) | Some(Reject::DoesNotFit) => "probe-other",
    }
}

/// Children grouped by an id, in order of first appearance (CPU numbering need not
/// follow the hierarchy: SMT siblings are often n and n + cores).
struct Level<T> {
    id: u32,
    children: Vec<T>,
}

fn child<T>(levels: &mut Vec<Level<T>>, id: u32) -> &mut Vec<T> {
    let pos = match levels.iter().position(|l| l.id == id) {
        Some(pos) => pos,
        None => {
            levels.push(Level {
                id,
                children: Vec::new(),
            });
            levels.len() - 1
        }
    };
    &mut levels[pos].children
}

type Cores = Vec<Level<CpuId>>;
type Clusters = Vec<Level<Level<CpuId>>>;
type Llcs = Vec<Level<Level<Level<CpuId>>>>;
type Nodes = Vec<Level<Level<Level<Level<CpuId>>>>>;
type Package = Level<Level<Level<Level<Level<CpuId>>>>>;
type Packages = Vec<Package>;

/// package → node → LLC → cluster → core → CPU.
fn layout(m: &Machine) -> Packages {
    let mut packages: Packages = Vec::new();
    for (idx, t) in m.cpus.iter().enumerate() {
        let Ok(cpu) = CpuId::try_from(idx) else {
            continue;
        };
        let nodes: &mut Nodes = child(&mut packages, t.package);
        let llcs: &mut Llcs = child(nodes, u32::from(t.node.0));
        let clusters: &mut Clusters = child(llcs, t.llc);
        let cores: &mut Cores = child(clusters, t.cluster);
        child(cores, t.core).push(cpu);
    }
    packages
}

/// The widest cluster's row, as the CSS custom properties `.cores.clusters` sizes a
/// column from: its CPUs, its cores (one gap between two) and its SMT cores (each a
/// box of threads). Each count is the largest over the clusters, so a column holds
/// any of them.
fn cluster_row<'a>(clusters: impl IntoIterator<Item = &'a Level<Level<CpuId>>>) -> String {
    let (mut cpus, mut cores, mut smt) = (0, 0, 0);
    for cluster in clusters {
        cpus = cpus.max(cluster.children.iter().map(|c| c.children.len()).sum());
        cores = cores.max(cluster.children.len());
        smt = smt.max(
            cluster
                .children
                .iter()
                .filter(|c| c.children.len() > 1)
                .count(),
        );
    }
    format!("--cpus: {cpus}; --cores: {cores}; --smt: {smt}")
}

/// Whether an LLC is drawn as a grid of cluster boxes: every cluster has a box (more
/// than one core, fewer than the LLC's).
fn tiles(llc: &Level<Level<Level<CpuId>>>) -> bool {
    let n_cores: usize = llc.children.iter().map(|c| c.children.len()).sum();
    llc.children
        .iter()
        .all(|cluster| cluster.children.len() > 1 && cluster.children.len() < n_cores)
}

/// The widest cluster row of the whole machine, for the drawing's outer boxes: a node
/// or LLC sits beside another only where each keeps room for two cluster columns
/// (static/css/03-machine.css, `.packages.tiled`). `None` where no LLC tiles.
fn machine_cluster_row(packages: &[Package]) -> Option<String> {
    let llcs = packages
        .iter()
        .flat_map(|p| &p.children)
        .flat_map(|n| &n.children)
        .filter(|llc| tiles(llc));
    let mut clusters = llcs.flat_map(|llc| &llc.children).peekable();
    clusters.peek()?;
    Some(cluster_row(clusters))
}

fn list(nr_cpus: u32, cpus: impl IntoIterator<Item = CpuId>) -> String {
    CpuMask::from_cpus(nr_cpus, cpus).to_list()
}

#[function_component(MachineView)]
pub fn machine_view(props: &Props) -> Html {
    let m = &props.machine;
    let nr = m.nr_cpus();
    let packages = layout(m);
    let row = machine_cluster_row(&packages);
    let tiled = row.is_some().then_some("tiled");

    let heat = heat_by_cpu(props.heat.as_deref(), nr);
    let cpu_button = |cpu: CpuId| -> Html {
        let t = m.topo(cpu);
        let mut class = classes!("cpu");
        let mut title = format!(
            "CPU {} · core {} · cluster {} · LLC {} · node {} · package {} · capacity {}",
            cpu.0, t.core, t.cluster, t.llc, t.node.0, t.package, t.capacity
        );
        let mut badge = None;
        let mut style = None;
        match props.wake.as_deref() {
            None => {
                let permille = heat.as_ref().and_then(|h| h[cpu.0 as usize]);
                style = domain_marks(props, permille, cpu, &mut class, &mut title);
            }
            Some(w) => badge = wake_marks(w, cpu, &mut class, &mut title),
        }
        let on_select = props.on_select.clone();
        let onclick = Callback::from(move |_: MouseEvent| on_select.emit(cpu));
        html! {
            // One tab stop for the whole drawing: the selected CPU's (arrow keys rove).
            <button {class} {title} {style} {onclick} data-cpu={cpu.0.to_string()}
                tabindex={if cpu == props.selected { "0" } else { "-1" }}>{ cpu.0 }{ for badge }</button>
        }
    };

    let core_box = |core: &Level<CpuId>| -> Html {
        if core.children.len() == 1 {
            cpu_button(core.children[0])
        } else {
            html! {
                <div class="core smt" title={format!("core {}: SMT siblings", core.id)}>
                    { for core.children.iter().map(|&c| cpu_button(c)) }
                </div>
            }
        }
    };

    let llc_box = |llc: &Level<Level<Level<CpuId>>>, label: String| -> Html {
        let n_cores: usize = llc.children.iter().map(|c| c.children.len()).sum();
        let boxed = |n: usize| n > 1 && n < n_cores;
        // Where every cluster gets a box they tile the LLC as a grid, row-major, in as
        // many equal columns as fit; static/css/03-machine.css sizes a column from these counts.
        let grid = tiles(llc).then(|| cluster_row(&llc.children));
        let class = classes!("cores", grid.is_some().then_some("clusters"));
        let cpus = llc
            .children
            .iter()
            .flat_map(|cluster| cluster.children.iter())
            .flat_map(|core| core.children.iter().copied());
        let clusters = llc.children.iter().map(|cluster| {
            if boxed(cluster.children.len()) {
                let ccpus = cluster
                    .children
                    .iter()
                    .flat_map(|c| c.children.iter().copied());
                html! {
                    <div class="box cluster">
                        <div class="box-label">
                            { format!("cluster {}", cluster.id) }
                            <span class="mask">{ list(nr, ccpus) }</span>
                        </div>
                        <div class="cores">{ for cluster.children.iter().map(core_box) }</div>
                    </div>
                }
            } else {
                html! { { for cluster.children.iter().map(core_box) } }
            }
        });
        html! {
            <div class="box llc">
                <div class="box-label">
                    { label }
                    <span class="mask">{ list(nr, cpus) }</span>
                </div>
                <div {class} style={grid}>
                    { for clusters }
                </div>
            </div>
        }
    };

    let node_box = |node: &Level<Level<Level<Level<CpuId>>>>, prefix: String| -> Html {
        if node.children.len() == 1 {
            let llc = &node.children[0];
            return llc_box(llc, format!("{prefix}node {} · LLC {}", node.id, llc.id));
        }
        html! {
            <div class="box node">
                <div class="box-label">{ format!("{prefix}node {}", node.id) }</div>
                <div class="children">
                    { for node.children.iter().map(|llc| llc_box(llc, format!("LLC {}", llc.id))) }
                </div>
            </div>
        }
    };

    let package_box = |pkg: &Level<Level<Level<Level<Level<CpuId>>>>>| -> Html {
        if pkg.children.len() == 1 {
            return node_box(&pkg.children[0], format!("package {} · ", pkg.id));
        }
        html! {
            <div class="box package">
                <div class="box-label">{ format!("package {}", pkg.id) }</div>
                <div class="children">
                    { for pkg.children.iter().map(|n| node_box(n, String::new())) }
                </div>
            </div>
        }
    };

    let onkeydown = Callback::from(|e: KeyboardEvent| {
        crate::dom::rove(&e, ".packages", "button.cpu");
    });
    // The drawing as a file (`machine_svg.rs`): the machine model drawn again as SVG,
    // with the shaded span and the selected CPU.
    let kernel = use_context::<crate::state::AppContext>()
        .map(|s| s.patches().to_string())
        .unwrap_or_default();
    let stem = crate::export::file_stem(&m.name, &kernel, None, "machine");
    let render = {
        let (m, shade, selected) = (m.clone(), props.highlight.clone(), props.selected);
        Callback::from(move |()| {
            Some(crate::components::machine_svg::machine_svg(
                &m,
                &kernel,
                shade.as_ref(),
                selected,
            ))
        })
    };
    html! {
        <div class="machine">
            <h2>
                { m.name.clone() }
                <span class="sub">
                    { format!(" · {} CPUs · {} · {} NUMA node{}",
                        nr, m.arch.as_str(), m.nr_nodes(), if m.nr_nodes() == 1 { "" } else { "s" }) }
                </span>
            </h2>
            <p class="description">{ m.description.clone() }</p>
            // Above the drawing, not under it: a tall machine's drawing pushed it below
            // the first screen (at 1280x800 on kunpeng920-6426, 1066 px down).
            <p class="hint">{ props.hint.clone() }</p>
            <div class={classes!("packages", tiled)} style={row}
                role="group" {onkeydown}
                aria-label="CPUs: Tab reaches the selected one, arrow keys move between them">
                { for packages.iter().map(package_box) }
            </div>
            <FigureExport selector=".machine" {stem} what="the machine drawing" hook="machine"
                render={Some(render)} />
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::topology::presets;

    #[test]
    fn epyc_2p_is_two_packages_of_twelve_ccx_of_eight_smt_cores() {
        let m = presets::machine("epyc9654-2p").expect("preset builds");
        let packages = layout(&m);
        assert_eq!(packages.len(), 2);
        for pkg in &packages {
            assert_eq!(pkg.children.len(), 1, "NPS1: one node per package");
            let llcs = &pkg.children[0].children;
            assert_eq!(llcs.len(), 12);
            for llc in llcs {
                let cores: Vec<_> = llc.children.iter().flat_map(|c| &c.children).collect();
                assert_eq!(cores.len(), 8);
                assert!(cores.iter().all(|core| core.children.len() == 2));
            }
        }
    }

    #[test]
    fn a_cluster_row_counts_the_widest_cluster() {
        let m = presets::machine("kunpeng920-6426").expect("preset builds");
        let packages = layout(&m);
        let llc = &packages[0].children[0].children[0];
        assert_eq!(llc.children.len(), 8);
        assert_eq!(
            cluster_row(&llc.children),
            "--cpus: 4; --cores: 4; --smt: 0"
        );
    }

    #[test]
    fn the_machine_cluster_row_is_the_widest_of_its_tiled_llcs() {
        let row = |name: &str| {
            let m = presets::machine(name).expect("preset builds");
            machine_cluster_row(&layout(&m))
        };
        assert_eq!(
            row("kunpeng920-6426").as_deref(),
            Some("--cpus: 4; --cores: 4; --smt: 0")
        );
        // A CCX is an LLC with no cluster of its own: nothing tiles.
        assert_eq!(row("epyc9654-2p"), None);
    }

    #[test]
    fn every_cpu_is_drawn_once() {
        for p in presets::PRESETS {
            let m = presets::machine(p.name).expect("preset builds");
            let mut seen: Vec<u32> = layout(&m)
                .iter()
                .flat_map(|p| &p.children)
                .flat_map(|n| &n.children)
                .flat_map(|l| &l.children)
                .flat_map(|c| &c.children)
                .flat_map(|core| core.children.iter().map(|cpu| cpu.0))
                .collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..m.nr_cpus()).collect::<Vec<_>>(), "{}", p.name);
        }
    }
}
