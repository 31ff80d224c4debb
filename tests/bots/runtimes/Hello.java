// A hello-world protocol bot for a JVM (its GC and compiler threads start with it).
import java.io.BufferedReader;
import java.io.InputStreamReader;

public class Hello {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        if (in.readLine() == null) return;
        System.out.println("{\"name\": \"hello-java\"}");
        System.out.flush();
        String line;
        while ((line = in.readLine()) != null && !line.contains("\"end\"")) {
            System.out.println("{\"real_move\": \"rock\"}");
            System.out.flush();
        }
    }
}
