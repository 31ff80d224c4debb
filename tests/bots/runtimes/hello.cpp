// A hello-world protocol bot in C++ (iostreams and a thread, as a C++ bot would use).
#include <iostream>
#include <string>
#include <thread>

int main() {
    std::string line;
    if (!std::getline(std::cin, line)) return 0;
    std::thread([] { std::cout << "{\"name\": \"hello-cpp\"}" << std::endl; }).join();
    while (std::getline(std::cin, line) && line.find("\"end\"") == std::string::npos) {
        std::cout << "{\"real_move\": \"rock\"}" << std::endl;
    }
    return 0;
}
