/* A shared object that is no plugin: it lacks elt_plugin_entry(). */
int elt_test_not_a_plugin(void);
int elt_test_not_a_plugin(void)
{
	return 1;
}
