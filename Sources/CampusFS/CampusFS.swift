/// The filesystem: FUSE operations mapped onto the metadata store and the content cache (issue 4).
