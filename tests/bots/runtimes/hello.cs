// A hello-world protocol bot for a .NET runtime (Mono here: Debian has no Microsoft .NET).
using System;
using System.Threading;

public static class Hello {
    public static void Main() {
        if (Console.ReadLine() == null) return;
        string name = null;
        var worker = new Thread(() => { name = "hello-dotnet"; });
        worker.Start();
        worker.Join();
        Console.WriteLine("{\"name\": \"" + name + "\"}");
        Console.Out.Flush();  // a pipe is block-buffered
        string line;
        while ((line = Console.ReadLine()) != null && !line.Contains("\"end\"")) {
            Console.WriteLine("{\"real_move\": \"rock\"}");
            Console.Out.Flush();
        }
    }
}
