# Sourced by the churn tests and scripts/soak.sh: the recorder's memory.
# rss_kib PID: VmRSS in KiB
rss_kib() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# rss_no_bpf_kib PID: resident KiB but the kernel's buffers it maps: BPF
# maps' pages (the ring buffer is 2 x its size of shared pages) and the
# side-band perf rings, resident once read: fixed, not growth
rss_no_bpf_kib() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { bpf = ($6 ~ /^anon_inode:(bpf|\[perf_event\])/) }
	     /^Rss:/ { if (!bpf) s += $2 }
	     END { if (NR) print s }' "/proc/$1/smaps" 2>/dev/null
}
