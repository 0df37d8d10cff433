//! The search for dependency cycles: Tarjan's strongly connected components of the whole
//! graph, then, in each component with a cycle, the weakest kind of cycle it holds (G0, then
//! G1c, G-single, G2; the same with real-time edges last).

use super::anomaly::{Anomaly, CycleKind, EdgeKind, Step};
use super::graph::{DependencyGraph, Node};
use std::collections::VecDeque;

/// Which edge kinds a search may follow.
#[derive(Clone, Copy)]
struct Allowed {
    rw: bool,
    rt: bool,
}

impl Allowed {
    fn lets(self, kind: EdgeKind) -> bool {
        match kind {
            EdgeKind::Ww | EdgeKind::Wr => true,
            EdgeKind::Rw => self.rw,
            EdgeKind::Rt => self.rt,
        }
    }
}

/// At most this many rw edges of one component are tried as the one rw edge of a G-single.
const G_SINGLE_TRIES: usize = 256;

/// Every component of the graph with a cycle, each reported once by its weakest cycle.
pub(super) fn cycles(graph: &DependencyGraph) -> Vec<Anomaly> {
    let every: Vec<Node> = (0..graph.edges.len() as Node).collect();
    let mut tarjan = Tarjan::new(graph.edges.len());
    let components = tarjan.components(graph, &every, |_| true);
    components
        .into_iter()
        .filter_map(|nodes| weakest_cycle(graph, &Component::of(nodes), &mut tarjan))
        .collect()
}

/// The nodes of a strongly connected component, sorted, so that membership is a binary search.
struct Component(Vec<Node>);

impl Component {
    fn of(mut nodes: Vec<Node>) -> Component {
        nodes.sort_unstable();
        Component(nodes)
    }

    fn position(&self, node: Node) -> Option<usize> {
        self.0.binary_search(&node).ok()
    }

    fn contains(&self, node: Node) -> bool {
        self.position(node).is_some()
    }
}

/// The weakest cycle in `component`: without real-time edges first (G0, G1c, G-single, G2),
/// then with them.
fn weakest_cycle(
    graph: &DependencyGraph,
    component: &Component,
    tarjan: &mut Tarjan,
) -> Option<Anomaly> {
    for rt in [false, true] {
        let ww = |kind: EdgeKind| kind == EdgeKind::Ww || (rt && kind == EdgeKind::Rt);
        if let Some(steps) = cycle_with(graph, component, tarjan, ww) {
            return Some(cycle(CycleKind::G0, steps));
        }
        let no_rw = Allowed { rw: false, rt };
        if let Some(steps) = cycle_with(graph, component, tarjan, |kind| no_rw.lets(kind)) {
            return Some(cycle(CycleKind::G1c, steps));
        }
        if let Some(steps) = g_single(graph, component, no_rw) {
            return Some(cycle(CycleKind::GSingle, steps));
        }
        let all = Allowed { rw: true, rt };
        if let Some(steps) = cycle_with(graph, component, tarjan, |kind| all.lets(kind)) {
            return Some(cycle(CycleKind::G2, steps));
        }
    }
    None
}

fn cycle(kind: CycleKind, steps: Vec<Step>) -> Anomaly {
    let realtime = steps.iter().any(|step| step.edge == EdgeKind::Rt);
    Anomaly::Cycle {
        kind,
        realtime,
        steps,
    }
}

/// A cycle in `component` through edges `allowed` lets, if there is one.
fn cycle_with(
    graph: &DependencyGraph,
    component: &Component,
    tarjan: &mut Tarjan,
    allowed: impl Fn(EdgeKind) -> bool + Copy,
) -> Option<Vec<Step>> {
    let inner = tarjan.components(graph, &component.0, allowed);
    let inner = Component::of(inner.into_iter().next()?);
    let start = *inner.0.iter().find(|&&node| graph.txn(node).is_some())?;
    let &(next, kind) = graph.edges[start as usize]
        .iter()
        .find(|(to, kind)| allowed(*kind) && inner.contains(*to))?;
    let mut path = vec![(next, kind)];
    path.extend(shortest_path(graph, &inner, next, start, allowed)?);
    Some(steps_of(graph, start, &path))
}

/// A cycle of one rw edge and edges `others` lets, if one of the first [`G_SINGLE_TRIES`] rw
/// edges of `component` closes one.
fn g_single(graph: &DependencyGraph, component: &Component, others: Allowed) -> Option<Vec<Step>> {
    let rw_edges = component.0.iter().flat_map(|&from| {
        graph.edges[from as usize]
            .iter()
            .filter(|(to, kind)| *kind == EdgeKind::Rw && component.contains(*to))
            .map(move |(to, _)| (from, *to))
    });
    for (from, to) in rw_edges.take(G_SINGLE_TRIES) {
        if let Some(back) = shortest_path(graph, component, to, from, |kind| others.lets(kind)) {
            let mut path = vec![(to, EdgeKind::Rw)];
            path.extend(back);
            return Some(steps_of(graph, from, &path));
        }
    }
    None
}

/// The shortest path from `from` to `to` inside `within` through edges `allowed` lets, as the
/// nodes after `from` with the kind of edge into each.
fn shortest_path(
    graph: &DependencyGraph,
    within: &Component,
    from: Node,
    to: Node,
    allowed: impl Fn(EdgeKind) -> bool,
) -> Option<Vec<(Node, EdgeKind)>> {
    let mut came_from: Vec<Option<(Node, EdgeKind)>> = vec![None; within.0.len()];
    let mut reached = vec![false; within.0.len()];
    reached[within.position(from)?] = true;
    let mut queue = VecDeque::from([from]);
    while let Some(node) = queue.pop_front() {
        if node == to {
            let mut path = Vec::new();
            let mut at = to;
            while at != from {
                let (previous, kind) = came_from[within.position(at)?]?;
                path.push((at, kind));
                at = previous;
            }
            path.reverse();
            return Some(path);
        }
        for &(next, kind) in &graph.edges[node as usize] {
            let Some(slot) = within.position(next) else {
                continue;
            };
            if allowed(kind) && !reached[slot] {
                reached[slot] = true;
                came_from[slot] = Some((node, kind));
                queue.push_back(next);
            }
        }
    }
    None
}

/// The steps of the cycle that leaves transaction `start` and follows `path` (each node with
/// the kind of edge into it) back to it; time nodes fold into the real-time edge they carry.
fn steps_of(graph: &DependencyGraph, start: Node, path: &[(Node, EdgeKind)]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut from = graph.txn(start).expect("a cycle starts at a transaction");
    let mut through_time = false;
    for &(node, kind) in path {
        match graph.txn(node) {
            None => through_time = true,
            Some(txn) => {
                let edge = if through_time { EdgeKind::Rt } else { kind };
                steps.push(Step { txn: from, edge });
                from = txn;
                through_time = false;
            }
        }
    }
    steps
}

/// Tarjan's algorithm, iterative (a history of 100,000 transactions would overflow a
/// recursive one), over a subset of nodes and edges, its per-node arrays kept between calls.
struct Tarjan {
    index: Vec<u32>,
    low: Vec<u32>,
    on_stack: Vec<bool>,
    member: Vec<bool>,
}

const UNVISITED: u32 = u32::MAX;

impl Tarjan {
    fn new(nodes: usize) -> Tarjan {
        Tarjan {
            index: vec![UNVISITED; nodes],
            low: vec![0; nodes],
            on_stack: vec![false; nodes],
            member: vec![false; nodes],
        }
    }

    /// The components of more than one node among `nodes`, through edges `allowed` lets.
    fn components(
        &mut self,
        graph: &DependencyGraph,
        nodes: &[Node],
        allowed: impl Fn(EdgeKind) -> bool,
    ) -> Vec<Vec<Node>> {
        for &node in nodes {
            self.member[node as usize] = true;
        }
        let mut found = Vec::new();
        let mut next_index = 0;
        let mut stack: Vec<Node> = Vec::new();
        // (node, position of the next edge to look at)
        let mut calls: Vec<(Node, usize)> = Vec::new();
        for &root in nodes {
            if self.index[root as usize] != UNVISITED {
                continue;
            }
            calls.push((root, 0));
            self.index[root as usize] = next_index;
            self.low[root as usize] = next_index;
            next_index += 1;
            stack.push(root);
            self.on_stack[root as usize] = true;
            while let Some(&mut (node, ref mut edge)) = calls.last_mut() {
                let edges = &graph.edges[node as usize];
                if let Some(&(next, kind)) = edges.get(*edge) {
                    *edge += 1;
                    let n = next as usize;
                    if !allowed(kind) || !self.member[n] {
                        continue;
                    }
                    if self.index[n] == UNVISITED {
                        self.index[n] = next_index;
                        self.low[n] = next_index;
                        next_index += 1;
                        stack.push(next);
                        self.on_stack[n] = true;
                        calls.push((next, 0));
                    } else if self.on_stack[n] {
                        self.low[node as usize] = self.low[node as usize].min(self.index[n]);
                    }
                    continue;
                }
                calls.pop();
                if let Some(&(parent, _)) = calls.last() {
                    self.low[parent as usize] =
                        self.low[parent as usize].min(self.low[node as usize]);
                }
                if self.low[node as usize] == self.index[node as usize] {
                    let mut component = Vec::new();
                    loop {
                        let top = stack.pop().expect("the node is on the stack");
                        self.on_stack[top as usize] = false;
                        component.push(top);
                        if top == node {
                            break;
                        }
                    }
                    if component.len() > 1 {
                        found.push(component);
                    }
                }
            }
        }
        for &node in nodes {
            self.index[node as usize] = UNVISITED;
            self.member[node as usize] = false;
        }
        found
    }
}
