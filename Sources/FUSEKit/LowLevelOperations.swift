import CFuse3
import Glibc

// The libfuse callback table. The closures capture nothing, so they convert to C function pointers; each
// finds the Swift state through the request's userdata, copies the arguments (libfuse frees them when the
// callback returns) and hands the filesystem a typed reply.

/// Runs `body` with the session's core, or answers EIO if the request carries none.
private func serve(_ request: fuse_req_t?, _ body: (SessionCore, fuse_req_t) -> Void) {
    guard let request else { return }
    guard let userdata = fuse_req_userdata(request) else {
        fuse_reply_err(request, EIO)
        return
    }
    body(Unmanaged<SessionCore>.fromOpaque(userdata).takeUnretainedValue(), request)
}

private func core(_ userdata: UnsafeMutableRawPointer?) -> SessionCore? {
    userdata.map { Unmanaged<SessionCore>.fromOpaque($0).takeUnretainedValue() }
}

/// File names are bytes; names that are not UTF-8 are repaired (and then simply not found).
private func string(_ pointer: UnsafePointer<CChar>?) -> String {
    pointer.map { String(cString: $0) } ?? ""
}

func makeLowLevelOperations() -> fuse_lowlevel_ops {
    var ops = fuse_lowlevel_ops()
    ops.`init` = { userdata, connection in
        guard let connection else { return }
        core(userdata)?.negotiate(&connection.pointee)
    }
    ops.destroy = { userdata in
        core(userdata)?.fileSystem.destroy()
    }
    ops.lookup = { request, parent, name in
        serve(request) { core, request in
            core.fileSystem.lookup(
                parent: parent, name: string(name), reply: EntryReply(request, core: core, operation: "lookup"))
        }
    }
    ops.forget = { request, inode, lookups in
        serve(request) { core, request in
            core.fileSystem.forget(inode, lookups: lookups)
            fuse_reply_none(request)
        }
    }
    ops.forget_multi = { request, count, forgets in
        serve(request) { core, request in
            for item in UnsafeBufferPointer(start: forgets, count: forgets == nil ? 0 : count) {
                core.fileSystem.forget(item.ino, lookups: item.nlookup)
            }
            fuse_reply_none(request)
        }
    }
    ops.getattr = { request, inode, info in
        serve(request) { core, request in
            core.fileSystem.getAttributes(
                inode, file: info.map { FileInfo($0) },
                reply: AttributesReply(request, core: core, operation: "getattr"))
        }
    }
    ops.readlink = { request, inode in
        serve(request) { core, request in
            core.fileSystem.readLink(inode, reply: LinkReply(request, core: core, operation: "readlink"))
        }
    }
    ops.open = { request, inode, info in
        serve(request) { core, request in
            core.fileSystem.open(
                inode, file: FileInfo(info), reply: OpenReply(request, core: core, operation: "open", fileInfo: info))
        }
    }
    ops.read = { request, inode, size, offset, info in
        serve(request) { core, request in
            core.fileSystem.read(
                inode, offset: Int64(offset), file: FileInfo(info),
                reply: DataReply(request, core: core, operation: "read", size: size))
        }
    }
    ops.release = { request, inode, info in
        serve(request) { core, request in
            core.fileSystem.release(
                inode, file: FileInfo(info), reply: StatusReply(request, core: core, operation: "release"))
        }
    }
    ops.opendir = { request, inode, info in
        serve(request) { core, request in
            if core.skipsOpenDirectory.load(ordering: .acquiring) {
                fuse_reply_err(request, ENOSYS)
                return
            }
            core.fileSystem.openDirectory(
                inode, file: FileInfo(info),
                reply: OpenReply(request, core: core, operation: "opendir", fileInfo: info))
        }
    }
    ops.readdir = { request, inode, size, offset, info in
        serve(request) { core, request in
            core.fileSystem.readDirectory(
                inode, offset: Int64(offset), file: FileInfo(info),
                reply: DirectoryReply(request, core: core, operation: "readdir", size: size))
        }
    }
    ops.readdirplus = { request, inode, size, offset, info in
        serve(request) { core, request in
            core.fileSystem.readDirectoryPlus(
                inode, offset: Int64(offset), file: FileInfo(info),
                reply: DirectoryPlusReply(request, core: core, operation: "readdirplus", size: size))
        }
    }
    ops.releasedir = { request, inode, info in
        serve(request) { core, request in
            core.fileSystem.releaseDirectory(
                inode, file: FileInfo(info), reply: StatusReply(request, core: core, operation: "releasedir"))
        }
    }
    ops.statfs = { request, inode in
        serve(request) { core, request in
            core.fileSystem.statistics(inode, reply: StatisticsReply(request, core: core, operation: "statfs"))
        }
    }
    ops.getxattr = { request, inode, name, size in
        serve(request) { core, request in
            core.fileSystem.getExtendedAttribute(
                inode, name: string(name),
                reply: ExtendedAttributeReply(request, core: core, operation: "getxattr", size: size))
        }
    }
    ops.listxattr = { request, inode, size in
        serve(request) { core, request in
            core.fileSystem.listExtendedAttributes(
                inode, reply: ExtendedAttributeNamesReply(request, core: core, operation: "listxattr", size: size))
        }
    }
    ops.access = { request, inode, mask in
        serve(request) { core, request in
            core.fileSystem.access(inode, mask: mask, reply: StatusReply(request, core: core, operation: "access"))
        }
    }
    ops.setxattr = { request, inode, name, value, size, flags in
        serve(request) { core, request in
            let bytes = value.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            core.fileSystem.setExtendedAttribute(
                inode, name: string(name), value: bytes, mode: ExtendedAttributeMode(flags: flags),
                reply: StatusReply(request, core: core, operation: "setxattr"))
        }
    }
    ops.removexattr = { request, inode, name in
        serve(request) { core, request in
            core.fileSystem.removeExtendedAttribute(
                inode, name: string(name), reply: StatusReply(request, core: core, operation: "removexattr"))
        }
    }
    ops.setattr = { request, inode, attributes, mask, info in
        serve(request) { core, request in
            core.fileSystem.setAttributes(
                inode, changes: AttributeChanges(attributes, mask: mask), file: info.map { FileInfo($0) },
                reply: AttributesReply(request, core: core, operation: "setattr"))
        }
    }
    ops.mknod = { request, parent, name, mode, device in
        serve(request) { core, request in
            core.fileSystem.makeNode(
                parent: parent, name: string(name), mode: mode, device: device,
                reply: EntryReply(request, core: core, operation: "mknod"))
        }
    }
    ops.mkdir = { request, parent, name, mode in
        serve(request) { core, request in
            core.fileSystem.makeDirectory(
                parent: parent, name: string(name), mode: mode,
                reply: EntryReply(request, core: core, operation: "mkdir"))
        }
    }
    ops.unlink = { request, parent, name in
        serve(request) { core, request in
            core.fileSystem.unlink(
                parent: parent, name: string(name), reply: StatusReply(request, core: core, operation: "unlink"))
        }
    }
    ops.rmdir = { request, parent, name in
        serve(request) { core, request in
            core.fileSystem.removeDirectory(
                parent: parent, name: string(name), reply: StatusReply(request, core: core, operation: "rmdir"))
        }
    }
    ops.symlink = { request, target, parent, name in
        serve(request) { core, request in
            core.fileSystem.symlink(
                target: string(target), parent: parent, name: string(name),
                reply: EntryReply(request, core: core, operation: "symlink"))
        }
    }
    ops.rename = { request, parent, name, newParent, newName, flags in
        serve(request) { core, request in
            core.fileSystem.rename(
                parent: parent, name: string(name), newParent: newParent, newName: string(newName), flags: flags,
                reply: StatusReply(request, core: core, operation: "rename"))
        }
    }
    ops.link = { request, inode, newParent, newName in
        serve(request) { core, request in
            core.fileSystem.link(
                inode, newParent: newParent, newName: string(newName),
                reply: EntryReply(request, core: core, operation: "link"))
        }
    }
    ops.write = { request, inode, buffer, size, offset, info in
        serve(request) { core, request in
            let bytes = buffer.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            core.fileSystem.write(
                inode, data: bytes, offset: Int64(offset), file: FileInfo(info),
                reply: WriteReply(request, core: core, operation: "write"))
        }
    }
    ops.flush = { request, inode, info in
        serve(request) { core, request in
            core.fileSystem.flush(
                inode, file: FileInfo(info), reply: StatusReply(request, core: core, operation: "flush"))
        }
    }
    ops.fsync = { request, inode, dataOnly, info in
        serve(request) { core, request in
            core.fileSystem.synchronize(
                inode, dataOnly: dataOnly != 0, file: FileInfo(info),
                reply: StatusReply(request, core: core, operation: "fsync"))
        }
    }
    ops.create = { request, parent, name, mode, info in
        serve(request) { core, request in
            core.fileSystem.create(
                parent: parent, name: string(name), mode: mode, file: FileInfo(info),
                reply: CreateReply(request, core: core, operation: "create", fileInfo: info))
        }
    }
    return ops
}
