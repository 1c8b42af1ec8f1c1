(function () {
'use strict';
var t0 = performance.now();
var D = JSON.parse(document.getElementById('fg-data').textContent);
/* the unit of the boxes: samples, microseconds when off-CPU time is in;
 * bytes, objects or ns for allocations and contended monitors (D.weights:
 * each weight's self values, chosen in #weight) */
var UNIT = ' ' + D.meta.unit, WEIGHTS = D.weights || null;
var CATS = D.cats, NAMES = D.names, FR = D.frames;
var NF = FR.length / 3, N = D.n;
var COLORS = {
	root: [200, 200, 200], process: [180, 180, 220], kernel: [225, 125, 0],
	native: [225, 90, 90], jvm: [200, 200, 60], stub: [210, 170, 120],
	interpreted: [178, 225, 178], c1: [120, 225, 120], c2: [80, 205, 80],
	java: [110, 215, 110], inlined: [80, 204, 204], java_native: [100, 170, 230],
	unknown: [170, 170, 170], class: [230, 150, 200], python: [150, 135, 240]
};
var LABELS = {
	root: 'all samples', process: 'process', kernel: 'kernel', native: 'native',
	jvm: 'JVM C++', stub: 'JVM stub', interpreted: 'Java interpreted',
	c1: 'Java compiled (C1)', c2: 'Java compiled (C2)', java: 'Java (level unknown)',
	inlined: 'Java inlined', java_native: 'Java native method', unknown: 'unknown',
	class: 'class (allocated, or the monitor)', python: 'Python'
};

function newTree(n) {
	return { n: n, frame: new Int32Array(n), parent: new Int32Array(n),
		self: new Float64Array(n), total: new Float64Array(n),
		first: new Int32Array(n).fill(-1), next: new Int32Array(n).fill(-1),
		bci: new Int32Array(n), line: new Int32Array(n), depth: new Int32Array(n) };
}
function nameOf(f) { return NAMES[FR[3 * f]]; }
function catOf(f) { return CATS[FR[3 * f + 1]]; }

/* parents come before children: totals backwards */
function totals(T) {
	T.total.fill(0);
	for (var i = T.n - 1; i >= 0; i--) {
		T.total[i] += T.self[i];
		if (i > 0) T.total[T.parent[i]] += T.total[i];
	}
}

/* totals, links, depths */
function finish(T, sortKids) {
	var i, p;
	totals(T);
	for (i = T.n - 1; i > 0; i--) {
		p = T.parent[i];
		T.next[i] = T.first[p];
		T.first[p] = i;
	}
	for (i = 1; i < T.n; i++) T.depth[i] = T.depth[T.parent[i]] + 1;
	if (!sortKids) return;
	var kids = [];
	for (i = 0; i < T.n; i++) {
		if (T.first[i] < 0 || T.next[T.first[i]] < 0) continue;
		kids.length = 0;
		for (var c = T.first[i]; c >= 0; c = T.next[c]) kids.push(c);
		kids.sort(function (a, b) {
			var x = nameOf(T.frame[a]), y = nameOf(T.frame[b]);
			return x < y ? -1 : x > y ? 1 : 0;
		});
		T.first[i] = kids[0];
		for (var k = 0; k < kids.length; k++)
			T.next[kids[k]] = k + 1 < kids.length ? kids[k + 1] : -1;
	}
}

/* the writer's number code: base-32 digits, the last one from END */
var MORE = '0123456789abcdefghijklmnopqrstuv', END = 'ABCDEFGHIJKLMNOPQRSTUVWXYZwxyz+/';
var LUT = new Int8Array(128).fill(-1), ci;
for (ci = 0; ci < 32; ci++) {
	LUT[MORE.charCodeAt(ci)] = ci;
	LUT[END.charCodeAt(ci)] = 32 + ci;
}
/* a weight's self values (one number a node) into T.self */
function decodeSelf(T, s) {
	var v = 0, i = 0, d;
	for (var p = 0; p < s.length; p++) {
		d = LUT[s.charCodeAt(p)];
		if (d < 32) { v = v * 32 + d; continue; }
		T.self[i++] = v * 32 + d - 32;
		v = 0;
	}
}
var fwd = newTree(N);
(function decode(s) {
	var v = 0, k = 0, i = 0, d, p;
	for (p = 0; p < s.length; p++) {
		d = LUT[s.charCodeAt(p)];
		if (d < 32) { v = v * 32 + d; continue; }
		v = v * 32 + d - 32;
		switch (k) {
		case 0: fwd.frame[i] = v; break;
		case 1: fwd.parent[i] = i ? i - v : -1; break;
		case 2: fwd.self[i] = v; break;
		case 3: fwd.bci[i] = v - 2; break;
		case 4: fwd.line[i] = v - 2; i++; break;
		}
		k = k === 4 ? 0 : k + 1;
		v = 0;
	}
})(D.nodes);
finish(fwd, false);	/* the writer sorted children already */

/* inverted tree: each stack read from its leaf up. The (parent, frame) ->
 * child index is an open-addressing table in typed arrays: a Map of
 * millions of keys is several times slower. */
var rev = null;
function buildReverse() {
	var cap = 1 << 16, n = 1;
	var fr = new Int32Array(cap), pa = new Int32Array(cap), se = new Float64Array(cap);
	var bc = new Int32Array(cap), li = new Int32Array(cap);
	var hcap = cap * 2, hk = new Int32Array(hcap).fill(-1);
	fr[0] = fwd.frame[0]; pa[0] = -1; bc[0] = -1; li[0] = -1;
	function slot(p, f) {
		var h = Math.imul(p, 0x9e3779b1) ^ Math.imul(f, 0x85ebca6b);
		h = (h ^ (h >>> 15)) & (hcap - 1);
		for (;;) {
			var c = hk[h];
			if (c < 0 || (pa[c] === p && fr[c] === f)) return h;
			h = (h + 1) & (hcap - 1);
		}
	}
	function grow() {
		var nc = cap * 2, t;
		t = new Int32Array(nc); t.set(fr); fr = t;
		t = new Int32Array(nc); t.set(pa); pa = t;
		t = new Float64Array(nc); t.set(se); se = t;
		t = new Int32Array(nc); t.set(bc); bc = t;
		t = new Int32Array(nc); t.set(li); li = t;
		cap = nc;
		hcap = nc * 2;
		hk = new Int32Array(hcap).fill(-1);
		for (var c = 1; c < n; c++) hk[slot(pa[c], fr[c])] = c;
	}
	for (var i = 1; i < N; i++) {
		var s = fwd.self[i];
		if (!s) continue;
		var cur = 0;
		for (var j = i; j > 0; j = fwd.parent[j]) {
			var f = fwd.frame[j], h = slot(cur, f), c = hk[h];
			if (c < 0) {
				if (n === cap) { grow(); h = slot(cur, f); }
				c = n++;
				hk[h] = c;
				fr[c] = f; pa[c] = cur; se[c] = 0;
				bc[c] = fwd.bci[j]; li[c] = fwd.line[j];
			} else {
				if (bc[c] !== fwd.bci[j]) bc[c] = -2;
				if (li[c] !== fwd.line[j]) li[c] = -2;
			}
			cur = c;
		}
		se[cur] += s;
	}
	var T = newTree(n);
	T.frame.set(fr.subarray(0, n)); T.parent.set(pa.subarray(0, n));
	T.self.set(se.subarray(0, n)); T.bci.set(bc.subarray(0, n));
	T.line.set(li.subarray(0, n));
	finish(T, true);
	return T;
}

var cv = document.getElementById('fg'), ctx = cv.getContext('2d');
var wrap = document.getElementById('wrap');
var tip = document.getElementById('tip'), stEl = document.getElementById('state');
var ROW = 16;
var S = { T: fwd, zoom: 0, icicle: false, reverse: false, match: null,
	matchedPct: 0, matchedSamples: 0, weight: 0 };
var rows = [], nrows = 0, zdepth = 0, rectCount = 0, lastRenderMs = 0;
var colorCache = new Array(NF);

function hash(s) {
	var h = 0;
	for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
	return h;
}
function colorOf(f) {
	var c = colorCache[f];
	if (c) return c;
	var b = COLORS[catOf(f)] || COLORS.unknown;
	var j = (hash(nameOf(f)) & 31) - 16;
	c = 'rgb(' + Math.max(0, Math.min(255, b[0] + j)) + ',' +
		Math.max(0, Math.min(255, b[1] + j)) + ',' +
		Math.max(0, Math.min(255, b[2] + j)) + ')';
	colorCache[f] = c;
	return c;
}

/* render(anchor): draw the current view. With anchor, scroll the graph so
 * that the view's base is on screen: the zoomed box (the root if none) at
 * the bottom for a flame graph, at the top for an icicle, with a few of its
 * ancestors for context. Without, the rows keep their place on screen (a
 * flame graph grows and shrinks at the top). */
function render(anchor) {
	var t = performance.now(), T = S.T, z = S.zoom, H0 = nrows * ROW;
	var W = Math.max(200, wrap.clientWidth - 16);
	var anc = [], a, k;
	rows = [];
	rectCount = 0;
	function add(d, x, w, n) {
		var r = rows[d] || (rows[d] = { x: [], w: [], n: [] });
		r.x.push(x); r.w.push(w); r.n.push(n);
		rectCount++;
	}
	for (a = T.parent[z]; a >= 0; a = T.parent[a]) anc.push(a);
	zdepth = anc.length;
	for (k = anc.length - 1; k >= 0; k--) add(anc.length - 1 - k, 0, W, anc[k]);
	var scale = W / (T.total[z] || 1), stack = [z, 0];
	while (stack.length) {
		var x = stack.pop(), n = stack.pop();
		add(T.depth[n], x, T.total[n] * scale, n);
		var cx = x;
		for (var c = T.first[n]; c >= 0; c = T.next[c]) {
			var cw = T.total[c] * scale;
			/* a box under a quarter pixel, and all under it, is invisible */
			if (cw >= 0.25) stack.push(c, cx);
			cx += cw;
		}
	}
	nrows = rows.length;
	var dpr = window.devicePixelRatio || 1, H = nrows * ROW;
	/* browsers refuse canvases over 32767 pixels a side or ~120 M pixels:
	 * a stack of a thousand frames on a high-DPI screen gets fewer pixels */
	dpr = Math.max(0.1, Math.min(dpr, 32767 / H, Math.sqrt(1.2e8 / (W * H))));
	cv.width = Math.round(W * dpr);
	cv.height = Math.round(H * dpr);
	cv.style.width = W + 'px';
	cv.style.height = H + 'px';
	ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	ctx.font = '11px monospace';
	ctx.textBaseline = 'middle';
	var cw1 = ctx.measureText('M').width || 6.6;
	for (var d = 0; d < nrows; d++) {
		var r = rows[d];
		if (!r) continue;
		var y = S.icicle ? d * ROW : (nrows - 1 - d) * ROW;
		ctx.globalAlpha = d < zdepth ? 0.5 : 1;
		for (k = 0; k < r.n.length; k++) {
			var f = T.frame[r.n[k]], w = r.w[k];
			ctx.fillStyle = S.match && S.match[f] ? '#e040e0' : colorOf(f);
			ctx.fillRect(r.x[k], y, w > 1.5 ? w - 0.5 : w, ROW - 1);
			if (w > 3 * cw1 + 6) {
				var s = nameOf(f), max = Math.floor((w - 6) / cw1);
				if (s.length > max) s = s.substring(0, max - 2) + '..';
				ctx.fillStyle = '#000';
				ctx.fillText(s, r.x[k] + 3, y + ROW / 2);
			}
		}
	}
	ctx.globalAlpha = 1;
	if (anchor) scrollToBase();
	else if (!S.icicle && H !== H0) wrap.scrollTop += H - H0;
	lastRenderMs = performance.now() - t;
	publish();
}

function scrollToBase() {
	var vh = wrap.clientHeight, top = cv.offsetTop;
	/* ancestors shown below (flame) or above (icicle) the zoomed box */
	var ctxRows = Math.min(zdepth, Math.floor(vh / 4 / ROW));
	wrap.scrollTop = Math.max(0, S.icicle ? top + (zdepth - ctxRows) * ROW - 4 :
		top + (nrows - zdepth + ctxRows) * ROW + 4 - vh);
}

function hit(ev) {
	var b = cv.getBoundingClientRect(), x = ev.clientX - b.left, y = ev.clientY - b.top;
	var row = Math.floor(y / ROW), d = S.icicle ? row : nrows - 1 - row, r = rows[d];
	if (!r) return -1;
	for (var k = 0; k < r.n.length; k++)
		if (x >= r.x[k] && x < r.x[k] + r.w[k]) return r.n[k];
	return -1;
}

function fmt(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
function pct(a, b) { return b ? (100 * a / b).toFixed(2) + '%' : '0%'; }

cv.addEventListener('mousemove', function (ev) {
	var n = hit(ev), T = S.T;
	if (n < 0) { tip.style.display = 'none'; return; }
	var f = T.frame[n], c = catOf(f), lvl = FR[3 * f + 2];
	var t = nameOf(f) + '\n' + (LABELS[c] || c) +
		'\ntotal: ' + fmt(T.total[n]) + UNIT + ' (' + pct(T.total[n], T.total[0]) + ' of all' +
		(S.zoom ? ', ' + pct(T.total[n], T.total[S.zoom]) + ' of zoom' : '') + ')' +
		'\nself: ' + fmt(T.self[n]) + UNIT;
	if (c === 'interpreted' || c === 'c1' || c === 'c2' || c === 'java' || c === 'inlined')
		t += '\ncomp level: ' + (lvl < 0 ? 'unknown' : lvl);
	if (T.bci[n] !== -1) t += '\nbci: ' + (T.bci[n] === -2 ? 'varies' : T.bci[n]);
	if (T.line[n] !== -1) t += '\nline: ' + (T.line[n] === -2 ? 'varies' : T.line[n]);
	tip.textContent = t;
	tip.style.display = 'block';
	var tx = ev.clientX + 12, ty = ev.clientY + 12;
	if (tx + tip.offsetWidth > window.innerWidth) tx = Math.max(0, ev.clientX - tip.offsetWidth - 12);
	if (ty + tip.offsetHeight > window.innerHeight) ty = Math.max(0, ev.clientY - tip.offsetHeight - 12);
	tip.style.left = tx + 'px';
	tip.style.top = ty + 'px';
});
cv.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
cv.addEventListener('click', function (ev) {
	var n = hit(ev);
	if (n < 0) return;
	S.zoom = n;
	render(true);
});

function search(q, anchor) {
	var T = S.T;
	document.getElementById('q').value = q;
	if (!q) {
		S.match = null;
		S.matchedPct = 0;
		S.matchedSamples = 0;
		document.getElementById('matched').textContent = '';
		render(anchor);
		return;
	}
	var re;
	try { re = new RegExp(q, 'i'); } catch (e) {
		re = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
	}
	var m = new Uint8Array(NF), f, i;
	for (f = 0; f < NF; f++) m[f] = re.test(nameOf(f)) ? 1 : 0;
	m[0] = 0;	/* never the 'all' root */
	S.match = m;
	/* samples with a match anywhere in their stack: the totals of the
	 * topmost matching boxes */
	var under = new Uint8Array(T.n), sum = 0;
	for (i = 1; i < T.n; i++) {
		if (under[T.parent[i]]) under[i] = 1;
		else if (m[T.frame[i]]) { under[i] = 1; sum += T.total[i]; }
	}
	S.matchedSamples = sum;
	S.matchedPct = T.total[0] ? 100 * sum / T.total[0] : 0;
	document.getElementById('matched').textContent =
		'matched: ' + S.matchedPct.toFixed(2) + '% (' + fmt(sum) + UNIT + ')';
	render(anchor);
}

function setReverse(on) {
	S.reverse = on;
	document.getElementById('rev').checked = on;
	if (on && !rev) rev = buildReverse();
	S.T = on ? rev : fwd;
	S.zoom = 0;
	search(document.getElementById('q').value, true);
}

/* weight k of D.weights: the forward tree's self values and totals, the
 * reversed tree rebuilt when next shown */
function setWeight(k) {
	if (!WEIGHTS || !WEIGHTS[k]) return;
	S.weight = k;
	document.getElementById('weight').value = String(k);
	UNIT = ' ' + WEIGHTS[k].unit;
	decodeSelf(fwd, WEIGHTS[k].self);
	totals(fwd);
	rev = null;
	if (S.reverse) rev = buildReverse();
	S.T = S.reverse ? rev : fwd;
	S.zoom = 0;
	search(document.getElementById('q').value, true);
}

function publish() {
	var ds = stEl.dataset;
	ds.ready = '1';
	ds.weight = String(S.weight);
	ds.unit = UNIT.substring(1);
	ds.total = String(S.T.total[0]);
	ds.nodes = String(S.T.n);
	ds.rects = String(rectCount);
	ds.rows = String(nrows);
	ds.reverse = S.reverse ? '1' : '0';
	ds.icicle = S.icicle ? '1' : '0';
	ds.matchedPct = S.matchedPct.toFixed(2);
	ds.matchedSamples = String(S.matchedSamples);
	ds.renderMs = lastRenderMs.toFixed(1);
	if (!ds.loadMs) {
		ds.scriptMs = (performance.now() - t0).toFixed(1);
		/* since navigation start: includes reading the file */
		ds.loadMs = performance.now().toFixed(1);
	}
}

document.getElementById('go').onclick = function () { search(document.getElementById('q').value); };
document.getElementById('clear').onclick = function () { search(''); };
document.getElementById('q').addEventListener('keydown', function (ev) {
	if (ev.key === 'Enter') search(this.value);
	if (ev.key === 'Escape') search('');
});
document.getElementById('rev').onchange = function () { setReverse(this.checked); };
document.getElementById('ice').onchange = function () { S.icicle = this.checked; render(true); };
document.getElementById('weight').onchange = function () { setWeight(+this.value); };
document.getElementById('reset').onclick = function () { S.zoom = 0; render(true); };
document.addEventListener('keydown', function (ev) {
	if (ev.key === 'Escape' && ev.target.id !== 'q') { S.zoom = 0; render(true); }
});
var rt;
window.addEventListener('resize', function () { clearTimeout(rt); rt = setTimeout(render, 100); });

var m = D.meta, leg = document.getElementById('legend'), maxDepth = 0;
for (ci = 0; ci < N; ci++) if (fwd.depth[ci] > maxDepth) maxDepth = fwd.depth[ci];
document.getElementById('meta').textContent = fmt(m.samples) + ' samples, ' +
	(m.duration_ns / 1e9).toFixed(1) + ' s at ' + m.frequency_hz + ' Hz, ' +
	fmt(m.lost) + ' lost, ' +
	(WEIGHTS ? fmt(m.alloc_events || 0) + ' alloc, ' + fmt(m.lock_events || 0) + ' lock events, ' : '') +
	fmt(m.stacks) + ' stacks, deepest ' + fmt(maxDepth) + ' frames';
if (WEIGHTS) {
	var sel = document.getElementById('weight');
	WEIGHTS.forEach(function (w, k) {
		var o = document.createElement('option');
		o.value = String(k);
		o.textContent = w.name + ' (' + w.unit + ')';
		sel.appendChild(o);
	});
	sel.hidden = false;
}
['interpreted', 'c1', 'c2', 'inlined', 'java_native', 'python', 'native', 'jvm', 'stub', 'kernel', 'unknown']
	.concat(WEIGHTS ? ['class'] : [])
	.forEach(function (c) {
		var s = document.createElement('span'), b = COLORS[c];
		s.style.background = 'rgb(' + b.join(',') + ')';
		s.textContent = LABELS[c];
		leg.appendChild(s);
	});

/* #search=REGEX&reverse=1&icicle=1&weight=K: a view that can be shared
 * (and tested) */
var h = {};
location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
	var p = kv.indexOf('=');
	if (p > 0) h[kv.substring(0, p)] = decodeURIComponent(kv.substring(p + 1));
});
S.icicle = h.icicle === '1';
document.getElementById('ice').checked = S.icicle;
if (WEIGHTS && h.weight && +h.weight > 0 && +h.weight < WEIGHTS.length) {
	S.weight = +h.weight;
	document.getElementById('weight').value = h.weight;
	UNIT = ' ' + WEIGHTS[S.weight].unit;
	decodeSelf(fwd, WEIGHTS[S.weight].self);
	totals(fwd);
}
if (h.reverse === '1') setReverse(true);
else search(h.search || '');
if (h.reverse === '1' && h.search) search(h.search);
/* open on the root, not on the tips of the deepest stacks; the keys
 * (arrows, Page Up/Down, Home/End) scroll the graph */
scrollToBase();
wrap.focus({ preventScroll: true });
})();
