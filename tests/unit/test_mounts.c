// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Mount tables: mountinfo parsed (escaped mount points, optional fields,
 * malformed lines skipped), the risky file system types, and which paths
 * lie on or below a risky mount (nested and bind mounts included); the
 * recorder's own table read and a mount told by an fd's id; safe_open()
 * walking across mounts still opens what it did.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/mounts.h"
#include "util/safe_open.h"

static const char sample[] =
	"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
	"27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
	"40 27 0:40 / /home/u/my\\040fuse rw,nosuid,nodev shared:7 master:2 - fuse.sshfs u@h:/ rw,user_id=1000\n"
	/* a normal mount nested in the FUSE one */
	"41 40 0:41 / /home/u/my\\040fuse/inner rw - tmpfs tmpfs rw\n"
	/* a bind mount of a FUSE directory elsewhere: still FUSE */
	"42 27 0:40 /sub /srv/bound rw - fuse.sshfs u@h:/ rw\n"
	"43 27 0:43 / /net/data rw - nfs4 srv:/export rw\n"
	"44 27 0:44 / /mnt/win rw - cifs //h/s rw\n"
	"45 27 0:45 / /mnt/fuseblk rw - fuseblk /dev/sdb1 rw\n"
	"46 27 0:46 / /mnt/fusex rw - ext4 /dev/sdc1 rw\n"
	"47 27 0:47 / /mnt/tab\\011and\\134slash rw - virtiofs tag rw\n"
	"bad line\n"
	"48 27 0:48 / relative rw - fuse x rw\n"
	"49 27 0:49 / /no/type rw\n"
	"50 27 0:50 / /no/type2 rw -\n"
	"51 27 0:51 / /dev/shm rw - tmpfs tmpfs rw";

static void test_fstypes(void **state)
{
	const char *yes[] = { "fuse", "fuse.sshfs", "fuse.lxcfs", "fuseblk",
			      "virtiofs", "nfs", "nfs4", "cifs", "smb3", "9p",
			      "ceph", "afs", "ncpfs", "gfs2", "ocfs2" };
	const char *no[] = { "ext4", "xfs", "tmpfs", "overlay", "proc", "fusectl",
			     "fuse_x", "nfsd", "btrfs", "squashfs", "" };

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		assert_true(mounts__fstype_risky(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		assert_false(mounts__fstype_risky(no[i]));
	assert_false(mounts__fstype_risky(NULL));
	assert_string_equal(mounts__fstype_kind("fuse.sshfs"), "FUSE");
	assert_string_equal(mounts__fstype_kind("nfs4"), "network");
}

static void test_parse(void **state)
{
	struct mount_table t = { 0 };
	const struct mount_ent *m;

	(void)state;
	assert_int_equal(mount_table__parse(&t, sample, strlen(sample)), 0);
	assert_int_equal(t.n, 11);
	assert_int_equal(t.nrisky, 6);
	m = mount_table__find_id(&t, 40);
	assert_non_null(m);
	assert_string_equal(m->point, "/home/u/my fuse");
	assert_string_equal(m->fstype, "fuse.sshfs");
	assert_int_equal(m->parent, 27);
	assert_int_equal(m->major, 0);
	assert_int_equal(m->minor, 40);
	assert_true(m->risky);
	m = mount_table__find_id(&t, 27);
	assert_non_null(m);
	assert_string_equal(m->point, "/");
	assert_int_equal(m->major, 254);
	assert_false(m->risky);
	m = mount_table__find_id(&t, 47);
	assert_non_null(m);
	assert_string_equal(m->point, "/mnt/tab\tand\\slash");
	/* the last line, without its newline */
	assert_non_null(mount_table__find_id(&t, 51));
	/* malformed: relative point, no type */
	assert_null(mount_table__find_id(&t, 48));
	assert_null(mount_table__find_id(&t, 49));
	assert_null(mount_table__find_id(&t, 50));
	/* parsed again: emptied first */
	assert_int_equal(mount_table__parse(&t, sample, 46), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.nrisky, 0);
	mount_table__free(&t);
	assert_int_equal(t.n, 0);
}

static void test_path_risky(void **state)
{
	struct mount_table t = { 0 };
	const struct mount_ent *m;

	(void)state;
	assert_int_equal(mount_table__parse(&t, sample, strlen(sample)), 0);
	m = mount_table__path_risky(&t, "/home/u/my fuse/lib/libx.so");
	assert_non_null(m);
	assert_int_equal(m->id, 40);
	/* the mount point itself */
	assert_non_null(mount_table__path_risky(&t, "/home/u/my fuse"));
	assert_non_null(mount_table__path_risky(&t, "/home/u/my fuse/"));
	/* nested normal mount: reached by a lookup in the FUSE one */
	assert_non_null(mount_table__path_risky(&t, "/home/u/my fuse/inner/x"));
	/* bind mount of a FUSE directory */
	m = mount_table__path_risky(&t, "/srv/bound/libx.so");
	assert_non_null(m);
	assert_int_equal(m->id, 42);
	assert_non_null(mount_table__path_risky(&t, "/net/data/a/b"));
	assert_non_null(mount_table__path_risky(&t, "/mnt/win/x.dll"));
	assert_non_null(mount_table__path_risky(&t, "/mnt/fuseblk/x"));
	assert_non_null(mount_table__path_risky(&t, "/mnt/tab\tand\\slash/f"));
	/* folded: ".", "..", repeated slashes */
	assert_non_null(mount_table__path_risky(&t, "/usr/../net//data/./f"));
	assert_non_null(mount_table__path_risky(&t, "/../../net/data/f"));
	assert_null(mount_table__path_risky(&t, "/net/data/../x"));
	/* a prefix that is not a parent directory */
	assert_null(mount_table__path_risky(&t, "/home/u/my fusex/lib.so"));
	assert_null(mount_table__path_risky(&t, "/mnt/fusex/lib.so"));
	assert_null(mount_table__path_risky(&t, "/home/u/my"));
	assert_null(mount_table__path_risky(&t, "/usr/lib/libc.so.6"));
	assert_null(mount_table__path_risky(&t, "/"));
	assert_null(mount_table__path_risky(&t, "/home/u/my\\040fuse/x"));
	mount_table__free(&t);
	/* a root on FUSE (rootless containers): everything */
	{
		static const char rootless[] =
			"1 0 0:5 / / rw - fuse.fuse-overlayfs fuse-overlayfs rw\n";

		assert_int_equal(mount_table__parse(&t, rootless,
						    strlen(rootless)), 0);
	}
	assert_non_null(mount_table__path_risky(&t, "/usr/lib/libc.so.6"));
	assert_non_null(mount_table__path_risky(&t, "/"));
	mount_table__free(&t);
	/* no risky mount: nothing */
	assert_null(mount_table__path_risky(&t, "/x"));
}

static void test_own_table(void **state)
{
	char why[SAFE_OPEN_WHY_MAX];
	uint64_t id = 0;
	int fd;

	(void)state;
	mounts__reset();
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(mounts__fd_mnt_id(fd, &id), 0);
	assert_true(id > 0);
	assert_int_equal(mounts__check_fd(0, fd, why, sizeof(why)), 0);
	assert_int_equal(mounts__check_fd(getpid(), fd, why, sizeof(why)), 0);
	close(fd);
	fd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(mounts__check_fd(0, fd, why, sizeof(why)), 0);
	close(fd);
	assert_int_equal(mounts__check_path(0, "/usr/lib", why, sizeof(why)), 0);
	assert_true(mounts__fd_mnt_id(-1, &id) < 0);
	/* a memfd: on the kernel's own mount, in no table, yet safe */
	fd = memfd_create("test-mounts", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(mounts__check_fd(getpid(), fd, why, sizeof(why)), 0);
	close(fd);
	mounts__reset();
}

/* safe_open across mounts (the walk) opens what a single lookup did */
static void test_walk(void **state)
{
	char dir[] = "/dev/shm/test_mounts.XXXXXX", path[256], lnk[128];
	char why[SAFE_OPEN_WHY_MAX];
	struct stat st;
	int fd, root;
	FILE *f;

	(void)state;
	if (!mkdtemp(dir)) {
		print_message("no /dev/shm: walk not tested\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/f", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("hello", f);
	fclose(f);
	fd = safe_open(SAFE_OPEN_HOST, path, 0, 16, &st, why, sizeof(why));
	assert_true(fd >= 0);
	assert_int_equal(st.st_size, 5);
	close(fd);
	/* through a link on another mount, and with ".." */
	snprintf(lnk, sizeof(lnk), "/tmp/test_mounts_link.%d", (int)getpid());
	assert_int_equal(symlink(path, lnk), 0);
	fd = safe_open(SAFE_OPEN_HOST, lnk, 0, 16, &st, why, sizeof(why));
	assert_true(fd >= 0);
	close(fd);
	fd = safe_open(SAFE_OPEN_HOST, lnk, SAFE_OPEN_NOFOLLOW, 16, &st, why,
		       sizeof(why));
	assert_int_equal(fd, -ELOOP);
	snprintf(lnk + strlen(lnk), sizeof(lnk) - strlen(lnk), "x");
	assert_int_equal(symlink("../dev/./shm/../shm", lnk), 0);
	snprintf(path, sizeof(path), "%s/%s/f", lnk, dir + 9);
	fd = safe_open(SAFE_OPEN_HOST, path, 0, 16, &st, why, sizeof(why));
	assert_true(fd >= 0);
	close(fd);
	/* /proc's plain links are followed across mounts, magic ones not */
	fd = safe_open(SAFE_OPEN_HOST, "/dev/shm/../../proc/self/status", 0,
		       16, &st, why, sizeof(why));
	assert_true(fd >= 0);
	close(fd);
	fd = safe_open(SAFE_OPEN_HOST, "/dev/shm/../../proc/self/exe", 0,
		       1ull << 40, &st, why, sizeof(why));
	assert_int_equal(fd, -ELOOP);
	/* in our own root, as a target's */
	root = safe_open__root(getpid());
	assert_true(root >= 0);
	snprintf(path, sizeof(path), "%s/f", dir);
	fd = safe_open(root, path, 0, 16, &st, why, sizeof(why));
	assert_true(fd >= 0);
	close(fd);
	/* a missing file across a mount: as before */
	snprintf(path, sizeof(path), "%s/nope", dir);
	fd = safe_open(root, path, 0, 16, &st, why, sizeof(why));
	assert_int_equal(fd, -ENOENT);
	/* a directory */
	fd = safe_open(root, dir, 0, 16, &st, why, sizeof(why));
	assert_int_equal(fd, -EINVAL);
	close(root);
	unlink(lnk);
	lnk[strlen(lnk) - 1] = '\0';
	unlink(lnk);
	snprintf(path, sizeof(path), "%s/f", dir);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fstypes),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_path_risky),
		cmocka_unit_test(test_own_table),
		cmocka_unit_test(test_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
