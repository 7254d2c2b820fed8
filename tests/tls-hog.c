/*
 * A module with 1 KiB of initial-exec thread-local data, more than is
 * left of glibc's static TLS surplus once tests/dlopen.test has cut it:
 * tests/test-dlopen.c checks that it does not load, so that the cut is
 * known to have taken effect.
 */
char *tls_hog(void);

static __thread __attribute__((tls_model("initial-exec"))) char hog[1024];

char *tls_hog(void)
{
	return hog;
}
