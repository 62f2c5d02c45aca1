/// Document blobs on disk, download coordination and eviction (issue 4).
