"""A re-export that overwrites the registry slot. A peek that reads Y and
renders on a process before Y is published there creates a placeholder in
the registry slot for Y and registers its import in it. When maintenance
then publishes Y, the reviewed code replaced the slot instead of backing the
placeholder in place: the placeholder is never backed, and the reader
registered in it is stranded. Its import never reads anything, a silent
permanent stall: ImportsBacked fails with a lasso of 4 states (the create,
the render into the placeholder, the export that replaces it, then nothing
fair is left to do)."""
