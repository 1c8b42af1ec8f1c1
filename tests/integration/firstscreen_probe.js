/* Injected by test_html_firstscreen.sh into a copy of a flame-graph page,
 * before the page's own script. It records every label the page draws on a
 * canvas (fillText, with the context's transform), forgets them when a
 * canvas is cleared or resized, and once the page has loaded reports into
 * a hidden pre element, id fs-probe, that --dump-dom prints:
 *   VIEW  innerWidth innerHeight
 *   SEEN  label   for each label visible on the first screen: its start
 *                 and its middle hit the canvas (document.elementFromPoint:
 *                 on screen, not covered by the bar or anything else)
 *   DRAWN label   for every label drawn (on screen or not)
 *   REACH label 0|1  the label drawn farthest from the root label 'all',
 *                 after scrolling the canvas's scrollable ancestors and the
 *                 window to it, as a user would: visible then (1) or not
 * Nothing but scrolling is done to the page. */
(function () {
	'use strict';
	var labels = [], P = CanvasRenderingContext2D.prototype;
	var fillText = P.fillText, clearRect = P.clearRect;
	P.fillText = function (text, x, y) {
		var m = this.getTransform(), c = this.canvas;
		labels.push({ c: c, text: String(text), w: this.measureText(text).width * m.a,
			/* device pixels of the canvas */
			x: m.a * x + m.c * y + m.e, y: m.b * x + m.d * y + m.f });
		return fillText.apply(this, arguments);
	};
	P.clearRect = function (x, y, w, h) {
		var c = this.canvas;
		if (x <= 0 && y <= 0 && w >= c.width && h >= c.height)
			labels = labels.filter(function (l) { return l.c !== c; });
		return clearRect.apply(this, arguments);
	};
	['width', 'height'].forEach(function (k) {
		var d = Object.getOwnPropertyDescriptor(HTMLCanvasElement.prototype, k);
		Object.defineProperty(HTMLCanvasElement.prototype, k, {
			configurable: true, enumerable: d.enumerable, get: d.get,
			set: function (v) {
				var c = this;
				labels = labels.filter(function (l) { return l.c !== c; });
				d.set.call(this, v);
			}
		});
	});
	/* the label's start and middle in viewport coordinates */
	function points(l) {
		var r = l.c.getBoundingClientRect();
		var sx = r.width / l.c.width, sy = r.height / l.c.height;
		return [[r.left + l.x * sx + 1, r.top + l.y * sy],
			[r.left + (l.x + l.w / 2) * sx, r.top + l.y * sy]];
	}
	function seen(l) {
		return points(l).every(function (p) {
			return document.elementFromPoint(p[0], p[1]) === l.c;
		});
	}
	function scrollTo(l) {
		for (var e = l.c.parentElement; e; e = e.parentElement) {
			var st = getComputedStyle(e).overflowY;
			if ((st === 'auto' || st === 'scroll') && e.scrollHeight > e.clientHeight) {
				var r = e.getBoundingClientRect();
				e.scrollTop += points(l)[0][1] - (r.top + e.clientHeight / 2);
			}
		}
		window.scrollBy(0, points(l)[0][1] - window.innerHeight / 2);
	}
	function report() {
		var out = ['VIEW\t' + window.innerWidth + '\t' + window.innerHeight], root = null;
		labels.forEach(function (l) { if (seen(l)) out.push('SEEN\t' + l.text); });
		labels.forEach(function (l) {
			out.push('DRAWN\t' + l.text);
			if (l.text === 'all') root = l;
		});
		if (root) {
			var far = null, fd = -1;
			labels.forEach(function (l) {
				if (l.c !== root.c) return;
				var d = Math.abs(l.y - root.y);
				if (d > fd) { fd = d; far = l; }
			});
			scrollTo(far);
			out.push('REACH\t' + far.text + '\t' + (seen(far) ? 1 : 0));
		}
		var pre = document.createElement('pre');
		pre.id = 'fs-probe';
		pre.textContent = out.join('\n');
		pre.style.display = 'none';
		document.body.appendChild(pre);
	}
	window.addEventListener('load', function () { setTimeout(report, 500); });
})();
